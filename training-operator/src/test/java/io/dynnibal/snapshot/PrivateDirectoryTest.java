package io.dynnibal.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The job's state directories: created owner-only, refused when another user owns them. */
class PrivateDirectoryTest {
  @TempDir Path tmp;

  @Test
  void aMissingDirectoryIsCreatedForItsOwnerOnly() throws Exception {
    Path dir = PrivateDirectory.prepare(tmp.resolve("state/checkpoints"), "checkpoint.dir");
    assertTrue(Files.isDirectory(dir));
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    assertEquals(dir, PrivateDirectory.prepare(dir, "checkpoint.dir"), "its owner may reuse it");
  }

  @Test
  void aDirectoryOfAnotherUserIsRefused() throws Exception {
    Path foreign = someoneElsesDirectory();
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class, () -> PrivateDirectory.prepare(foreign, "snapshot.dir"));
    assertTrue(e.getMessage().startsWith("snapshot.dir " + foreign), e.getMessage());
    assertTrue(e.getMessage().contains("belongs to"), e.getMessage());
  }

  @Test
  void aLinkOfOursToAnotherUsersDirectoryIsRefused() throws Exception {
    Path link = Files.createSymbolicLink(tmp.resolve("snapshots"), someoneElsesDirectory());
    assertThrows(IllegalStateException.class, () -> PrivateDirectory.prepare(link, "snapshot.dir"));
  }

  /**
   * A directory this process's user does not own: one handed to another user when the tests run as
   * root (who may), else the root directory.
   */
  private Path someoneElsesDirectory() throws Exception {
    if (!"root".equals(System.getProperty("user.name"))) {
      return Path.of("/");
    }
    Path dir = Files.createDirectory(tmp.resolve("theirs"));
    UserPrincipal nobody =
        dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
    Files.setOwner(dir, nobody);
    assertEquals(nobody, Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS));
    return dir;
  }
}
