package io.dynnibal.snapshot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Set;

/**
 * A directory the job keeps its state in (checkpoints, model versions): created readable and
 * writable by its owner only, and refused when someone else owns it or the link that leads to it. A
 * directory another user created first, or a symbolic link another user planted where the job's
 * directory would be, could hand that user the job's models and let them replace what it restores
 * from.
 */
public final class PrivateDirectory {
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rwx------");

  private PrivateDirectory() {}

  /**
   * Creates {@code dir} (and missing parents) owner-only, or checks that this process's user owns
   * the existing one and any symbolic link on the way to it.
   *
   * @param setting the setting that names it, for the error
   * @return {@code dir}
   * @throws IllegalStateException when another user owns it
   */
  public static Path prepare(Path dir, String setting) {
    try {
      boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
      if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
        if (posix) {
          Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } else {
          Files.createDirectories(dir);
        }
        return dir;
      }
      UserPrincipal me =
          dir.getFileSystem()
              .getUserPrincipalLookupService()
              .lookupPrincipalByName(System.getProperty("user.name"));
      requireOwner(dir, Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS), me, setting);
      requireOwner(dir, Files.getOwner(dir), me, setting);
      if (!Files.isDirectory(dir)) {
        throw new IllegalStateException(setting + " " + dir + " exists and is not a directory");
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(setting + " " + dir + ": " + e.getMessage(), e);
    }
  }

  private static void requireOwner(
      Path dir, UserPrincipal owner, UserPrincipal me, String setting) {
    if (!owner.equals(me)) {
      throw new IllegalStateException(
          setting
              + " "
              + dir
              + " (or the link to it) belongs to "
              + owner.getName()
              + ", not to "
              + me.getName()
              + " who runs the job: another user could read or replace its state there; name a"
              + " directory of your own");
    }
  }
}
