package io.dynnibal.tests.harness;

import io.dynnibal.local.EmbeddedKafkaBroker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for a TLS test, made with the running JDK's {@code keytool}, no CA: a self-signed
 * broker certificate valid for 127.0.0.1 and localhost, a self-signed client certificate, and a
 * stranger's self-signed certificate the broker does not trust. Each trust store holds the peer's
 * certificate. PKCS12 stores; every password is random and distinct (so a test can look for them in
 * logs and state).
 */
public final class TlsMaterial {
  private static final String TYPE = "PKCS12";

  /** The environment variable that hands keytool a store's password. */
  private static final String STORE_PASS = "DYNNIBAL_TEST_STOREPASS";

  public final Path brokerKeystore;
  public final Path brokerTruststore;
  public final Path clientKeystore;
  public final Path clientTruststore;
  public final Path strangerKeystore;

  public final String brokerKeystorePassword = secret("broker-ks");
  public final String brokerTruststorePassword = secret("broker-ts");
  public final String clientKeystorePassword = secret("client-ks");
  public final String clientTruststorePassword = secret("client-ts");
  public final String strangerKeystorePassword = secret("stranger-ks");

  private TlsMaterial(Path dir) {
    brokerKeystore = dir.resolve("broker.p12");
    brokerTruststore = dir.resolve("broker-trust.p12");
    clientKeystore = dir.resolve("client.p12");
    clientTruststore = dir.resolve("client-trust.p12");
    strangerKeystore = dir.resolve("stranger.p12");
  }

  /** Generates every store under {@code dir} (a few seconds: keytool runs 9 times). */
  public static TlsMaterial generate(Path dir) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    TlsMaterial m = new TlsMaterial(dir);
    m.keyPair(
        m.brokerKeystore,
        m.brokerKeystorePassword,
        "CN=localhost",
        "SAN=ip:127.0.0.1,dns:localhost");
    m.keyPair(m.clientKeystore, m.clientKeystorePassword, "CN=dynnibal-client", null);
    m.keyPair(m.strangerKeystore, m.strangerKeystorePassword, "CN=stranger", null);
    Path brokerCert =
        m.export(m.brokerKeystore, m.brokerKeystorePassword, dir.resolve("broker.crt"));
    Path clientCert =
        m.export(m.clientKeystore, m.clientKeystorePassword, dir.resolve("client.crt"));
    // The broker trusts the client and itself (its admin client presents the broker's key store).
    m.trust(m.brokerTruststore, m.brokerTruststorePassword, "client", clientCert);
    m.trust(m.brokerTruststore, m.brokerTruststorePassword, "broker", brokerCert);
    m.trust(m.clientTruststore, m.clientTruststorePassword, "broker", brokerCert);
    return m;
  }

  /** What {@link EmbeddedKafkaBroker#startWithTls} needs. */
  public EmbeddedKafkaBroker.Tls broker() {
    return new EmbeddedKafkaBroker.Tls(
        brokerKeystore, brokerKeystorePassword, brokerTruststore, brokerTruststorePassword);
  }

  /** Client properties (no {@code kafka.} prefix) that trust the broker: for SASL_SSL. */
  public Map<String, String> trustOnly() {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("ssl.truststore.location", clientTruststore.toAbsolutePath().toString());
    p.put("ssl.truststore.password", clientTruststorePassword);
    p.put("ssl.truststore.type", TYPE);
    return p;
  }

  /** Client properties of the client the broker trusts: its trust store and key store. */
  public Map<String, String> client() {
    return withKeystore(clientKeystore, clientKeystorePassword);
  }

  /** A client that trusts the broker but whose certificate the broker does not know. */
  public Map<String, String> stranger() {
    return withKeystore(strangerKeystore, strangerKeystorePassword);
  }

  /** Every password here, to look for where none may appear. */
  public List<String> passwords() {
    return List.of(
        brokerKeystorePassword,
        brokerTruststorePassword,
        clientKeystorePassword,
        clientTruststorePassword,
        strangerKeystorePassword);
  }

  private Map<String, String> withKeystore(Path keystore, String password) {
    Map<String, String> p = trustOnly();
    p.put("ssl.keystore.location", keystore.toAbsolutePath().toString());
    p.put("ssl.keystore.password", password);
    p.put("ssl.keystore.type", TYPE);
    p.put("ssl.key.password", password); // PKCS12: the key's password is the store's
    return p;
  }

  private static String secret(String what) {
    byte[] random = new byte[8];
    new SecureRandom().nextBytes(random);
    return what + "-" + HexFormat.of().formatHex(random);
  }

  private void keyPair(Path store, String password, String dname, String san)
      throws IOException, InterruptedException {
    List<String> args =
        new ArrayList<>(
            List.of(
                "-genkeypair",
                "-alias",
                "key",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                dname,
                "-validity",
                "2",
                "-storetype",
                TYPE,
                "-keystore",
                store.toString(),
                "-storepass:env",
                STORE_PASS,
                "-keypass:env",
                STORE_PASS));
    if (san != null) {
      args.addAll(List.of("-ext", san));
    }
    keytool(args, password);
  }

  private Path export(Path store, String password, Path cert)
      throws IOException, InterruptedException {
    keytool(
        List.of(
            "-exportcert",
            "-rfc",
            "-alias",
            "key",
            "-storetype",
            TYPE,
            "-keystore",
            store.toString(),
            "-storepass:env",
            STORE_PASS,
            "-file",
            cert.toString()),
        password);
    return cert;
  }

  private void trust(Path store, String password, String alias, Path cert)
      throws IOException, InterruptedException {
    keytool(
        List.of(
            "-importcert",
            "-noprompt",
            "-alias",
            alias,
            "-file",
            cert.toString(),
            "-storetype",
            TYPE,
            "-keystore",
            store.toString(),
            "-storepass:env",
            STORE_PASS),
        password);
  }

  /**
   * Runs keytool with {@code password} in its environment ({@value #STORE_PASS}), never in its
   * arguments, which every local user can read.
   */
  private static void keytool(List<String> args, String password)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(args);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put(STORE_PASS, password);
    Process p = builder.start();
    byte[] output = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(
          "keytool " + args.get(0) + " failed: " + new String(output, StandardCharsets.UTF_8));
    }
  }
}
