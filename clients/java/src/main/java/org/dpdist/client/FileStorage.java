package org.dpdist.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * A {@link Storage} in a directory: each key a file, written to a temporary file in the same directory, forced to disk,
 * and renamed over the old one (an atomic replacement: a crash leaves the old value or the new, never a torn one), the
 * directory created for its owner only.  A write that fails (a full disk, a read-only file system) throws
 * {@link IncompatibleStateError} naming the file and leaves the old value in place, so the report it was to record is
 * never sent.  {@link #withLock} holds a file lock ({@code .lock}) and a lock of this process, so two clients of one
 * device, in one process or several, read, draw and save the ledger one after the other.
 */
public final class FileStorage implements Storage {
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9._-]{1,200}");
    private static final ReentrantLock PROCESS_LOCK = new ReentrantLock();

    private final Path directory;

    /** A storage in {@code directory}, created (for its owner only, where the file system has permissions) if missing. */
    public FileStorage(Path directory) {
        this.directory = directory.toAbsolutePath();
        try {
            if (!Files.isDirectory(this.directory)) {
                Files.createDirectories(this.directory);
                try {
                    Files.setPosixFilePermissions(this.directory, PosixFilePermissions.fromString("rwx------"));
                } catch (UnsupportedOperationException notPosix) {
                    // a file system without POSIX permissions (Android's app directory is private already)
                }
            }
        } catch (IOException error) {
            throw new InvalidParameterError("The storage directory " + this.directory + " cannot be created (" + error.getMessage() + ").");
        }
    }

    public Path directory() {
        return directory;
    }

    private Path fileOf(String key) {
        if (key == null || !KEY.matcher(key).matches()) {
            throw new InvalidParameterError("A storage key is 1 to 200 characters of A-Z, a-z, 0-9, '.', '_' and '-'. Got " + Json.show(key) + ".");
        }
        return directory.resolve(key + ".json");
    }

    @Override
    public String getItem(String key) {
        Path file = fileOf(key);
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        } catch (NoSuchFileException missing) {
            return null;
        } catch (IOException error) {
            throw new IncompatibleStateError("The stored " + key + " (" + file + ") cannot be read: " + error.getMessage(), error);
        }
    }

    @Override
    public void setItem(String key, String value) {
        Path file = fileOf(key);
        Path temporary = directory.resolve("." + key + "." + Long.toHexString(System.nanoTime()) + ".tmp");
        try {
            try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer bytes = ByteBuffer.wrap(value.getBytes(StandardCharsets.UTF_8));
                while (bytes.hasRemaining()) channel.write(bytes);
                channel.force(true);
            }
            try {
                Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException notAtomic) {
                Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING);
            }
            forceDirectory();
        } catch (IOException error) {
            try {
                Files.deleteIfExists(temporary);
            } catch (IOException ignored) {
                // the write failed already: that is what is reported
            }
            throw new IncompatibleStateError("The " + key + " could not be saved to " + file + " (" + error.getMessage() + "); the old one is kept and "
                + "nothing that needed it was sent.", error);
        }
    }

    /** Force the directory entry of the rename to disk (where the platform lets a directory be opened). */
    private void forceDirectory() throws IOException {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (FileSystemException | UnsupportedOperationException notADirectoryChannel) {
            // some platforms cannot open a directory; the rename itself is atomic
        }
    }

    @Override
    public <T> T withLock(Supplier<T> action) {
        PROCESS_LOCK.lock();
        if (PROCESS_LOCK.getHoldCount() > 1) { // this thread holds the lock already (a nested call): the file lock too
            try {
                return action.get();
            } finally {
                PROCESS_LOCK.unlock();
            }
        }
        try (FileChannel channel = FileChannel.open(directory.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            FileLock lock = channel.lock();
            try {
                return action.get();
            } finally {
                lock.release();
            }
        } catch (IOException error) {
            throw new UncheckedIOException("The storage lock " + directory.resolve(".lock") + " cannot be taken", error);
        } finally {
            PROCESS_LOCK.unlock();
        }
    }
}
