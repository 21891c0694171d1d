package io.dynnibal.schemas;

import org.apache.avro.util.ClassSecurityValidator;

/**
 * Avro 1.12 refuses to instantiate generated classes outside a trusted set ({@code
 * SecurityException: Forbidden ... not trusted}). Our generated records live in this package;
 * trusting it here, once per JVM, saves every launcher, test runner and TaskManager from having to
 * pass {@code -Dorg.apache.avro.SERIALIZABLE_PACKAGES}.
 */
public final class AvroTrust {
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
      if (installed || ClassSecurityValidator.getGlobal().isTrusted(TrainingPair.class)) {
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
}
