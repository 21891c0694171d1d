package io.dynnibal.schemas;

import java.lang.reflect.Method;
import org.apache.avro.SystemLimitException;
import org.apache.avro.util.ClassSecurityValidator;

/**
 * What every JVM that reads our records needs from Avro, set once:
 *
 * <ul>
 *   <li>Trust: Avro 1.12 refuses to instantiate generated classes outside a trusted set ({@code
 *       SecurityException: Forbidden ... not trusted}). Our generated records live in this package;
 *       trusting it here saves every launcher, test runner and TaskManager from having to pass
 *       {@code -Dorg.apache.avro.SERIALIZABLE_PACKAGES}.
 *   <li>Bounds: a value declares the length of each string, bytes and collection before its
 *       content, and Avro allocates that length before reading it (by default up to 2 GB). Here a
 *       string may hold at most {@value #MAX_STRING_BYTES} bytes, a bytes field {@value #MAX_BYTES}
 *       and a collection {@value #MAX_COLLECTION_ITEMS} items, so a hostile or broken record fails
 *       to decode (and is dead-lettered) without allocating more. A user's own {@code
 *       -Dorg.apache.avro.limits.*} settings win.
 * </ul>
 */
public final class AvroTrust {
  /** A target or query text: far beyond any real one, far below what hurts a TaskManager. */
  public static final int MAX_STRING_BYTES = 4 << 20;

  public static final int MAX_BYTES = 64 << 20;

  /** Floats of a model update's matrices (d' x d landmarks, d' x d' maps) and ids of a batch. */
  public static final int MAX_COLLECTION_ITEMS = 16 << 20;

  private static volatile boolean installed;

  private AvroTrust() {}

  /**
   * Adds this package to the JVM-wide trusted set; the previous predicate keeps trusting what it
   * trusted. Call it before Avro touches our classes in a JVM: codecs do, and so must operators'
   * {@code open()} (Flink's Avro serializer instantiates records when they cross the network or
   * come back from state). Idempotent, also across class loaders: a job submitted again to a
   * session cluster finds the package trusted and adds nothing.
   */
  public static void install() {
    if (installed) {
      return;
    }
    synchronized (AvroTrust.class) {
      if (installed) {
        return;
      }
      bound();
      if (ClassSecurityValidator.getGlobal().isTrusted(TrainingPair.class)) {
        installed = true;
        return;
      }
      String trustedPackage = AvroTrust.class.getPackageName();
      ClassSecurityValidator.setGlobal(
          ClassSecurityValidator.composite(
              ClassSecurityValidator.getGlobal(),
              type -> trustedPackage.equals(type.getPackageName())));
      installed = true;
    }
  }

  /**
   * Sets the decoding limits unless the user did, and makes Avro read them again: it reads them
   * once per JVM, possibly before this runs (Flink may decode Avro state first).
   */
  private static void bound() {
    System.getProperties()
        .putIfAbsent(
            SystemLimitException.MAX_STRING_LENGTH_PROPERTY, Integer.toString(MAX_STRING_BYTES));
    System.getProperties()
        .putIfAbsent(SystemLimitException.MAX_BYTES_LENGTH_PROPERTY, Integer.toString(MAX_BYTES));
    System.getProperties()
        .putIfAbsent(
            SystemLimitException.MAX_COLLECTION_LENGTH_PROPERTY,
            Integer.toString(MAX_COLLECTION_ITEMS));
    try {
      Method reset = SystemLimitException.class.getDeclaredMethod("resetLimits");
      reset.setAccessible(true);
      reset.invoke(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // An Avro without resetLimits read the properties when it first loaded; if that was
      // before this call, its defaults stay.
    }
  }
}
