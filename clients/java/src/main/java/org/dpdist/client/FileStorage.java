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
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * A {@link Storage} in a directory: each key a file, written to a temporary file in the same directory, forced to disk,
 * and renamed over the old one (an atomic replacement: a crash leaves the old value or the new, never a torn one), the
 * directory its owner's only and each file {@code rw-------} (where the file system has POSIX permissions).  A write that fails (a full disk, a read-only file system) throws
 * {@link IncompatibleStateError} naming the file and leaves the old value in place, so the report it was to record is
 * never sent.  {@link #withLock} holds a file lock ({@code .lock}) and a lock of this process, so two clients of one
 * device, in one process or several, read, draw and save the ledger one after the other.
 */
public final class FileStorage implements Storage {
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9._-]{1,200}");
    private static final ReentrantLock PROCESS_LOCK = new ReentrantLock();

    private static final Set<PosixFilePermission> OWNER_DIRECTORY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");

    private static final Set<StandardOpenOption> CREATE_NEW_WRITE = EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    private static final Set<StandardOpenOption> CREATE_WRITE = EnumSet.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE);

    /** How long {@link #withLock} waits for the lock unless told otherwise: 30 s. */
    public static final long DEFAULT_LOCK_TIMEOUT_MS = 30_000;

    private final Path directory;
    private final long lockTimeoutMs;

    /**
     * A storage in {@code directory}, created if missing.  Where the file system has POSIX permissions the directory is
     * made its owner's only ({@code rwx------}: an existing one that others may read or write is changed, or refused with
     * {@link InvalidParameterError} when this process cannot change it) and every file is written {@code rw-------}.
     */
    public FileStorage(Path directory) {
        this(directory, DEFAULT_LOCK_TIMEOUT_MS);
    }

    /** {@link #FileStorage(Path)} whose {@link #withLock} waits at most {@code lockTimeoutMs} (&gt; 0) for the lock. */
    public FileStorage(Path directory, long lockTimeoutMs) {
        if (lockTimeoutMs <= 0) throw new InvalidParameterError("The 'lockTimeoutMs' argument of FileStorage must be > 0. Got " + lockTimeoutMs + ".");
        this.lockTimeoutMs = lockTimeoutMs;
        this.directory = directory.toAbsolutePath();
        try {
            if (!Files.isDirectory(this.directory)) Files.createDirectories(this.directory);
        } catch (IOException error) {
            throw new InvalidParameterError("The storage directory " + this.directory + " cannot be created (" + error.getMessage() + ").");
        }
        ownerOnly(this.directory);
    }

    /** Make {@code directory} rwx------ (a no-op where the file system has no POSIX permissions), or refuse it. */
    private static void ownerOnly(Path directory) {
        Set<PosixFilePermission> now;
        try {
            now = Files.getPosixFilePermissions(directory);
        } catch (UnsupportedOperationException notPosix) {
            return; // a file system without POSIX permissions (Android's app directory is private already)
        } catch (IOException error) {
            throw new InvalidParameterError("The storage directory " + directory + " cannot be read (" + error.getMessage() + ").");
        }
        if (now.equals(OWNER_DIRECTORY)) return;
        try {
            Files.setPosixFilePermissions(directory, OWNER_DIRECTORY);
        } catch (IOException error) {
            throw new InvalidParameterError("The storage directory " + directory + " is " + PosixFilePermissions.toString(now)
                + ": others could read the ledger (its memo holds the device's values) or replace it, and this process cannot make it "
                + "rwx------ (" + error.getMessage() + "). Give the storage a directory of its own that only the app's user can open.");
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
            try (FileChannel channel = FileChannel.open(temporary, CREATE_NEW_WRITE, ownerFile())) {
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

    /** {@code rw-------} where the file system has POSIX permissions (none elsewhere). */
    private FileAttribute<?>[] ownerFile() {
        boolean posix = directory.getFileSystem().supportedFileAttributeViews().contains("posix");
        return posix ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_FILE)} : new FileAttribute<?>[0];
    }

    /** Force the directory entry of the rename to disk (where the platform lets a directory be opened). */
    private void forceDirectory() throws IOException {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (FileSystemException | UnsupportedOperationException notADirectoryChannel) {
            // some platforms cannot open a directory; the rename itself is atomic
        }
    }

    /**
     * Run {@code action} holding this process's lock and the file lock {@code .lock} of the directory, waiting at most
     * the lock timeout for them (30 s unless given to the constructor): a lock held longer (another process stuck, or
     * holding it on purpose) is an {@link IncompatibleStateError} naming the lock file, never an endless wait.
     */
    @Override
    public <T> T withLock(Supplier<T> action) {
        long deadline = System.nanoTime() + lockTimeoutMs * 1_000_000L;
        try {
            if (!PROCESS_LOCK.tryLock(lockTimeoutMs, TimeUnit.MILLISECONDS)) throw lockTimeout();
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IncompatibleStateError("Interrupted while waiting for the storage lock " + directory.resolve(".lock") + ".", interrupted);
        }
        if (PROCESS_LOCK.getHoldCount() > 1) { // this thread holds the lock already (a nested call): the file lock too
            try {
                return action.get();
            } finally {
                PROCESS_LOCK.unlock();
            }
        }
        try (FileChannel channel = FileChannel.open(directory.resolve(".lock"), CREATE_WRITE, ownerFile())) {
            FileLock lock = fileLock(channel, deadline);
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

    /** The file lock of {@code channel}, tried every 10 ms until {@code deadline} (System.nanoTime). */
    private FileLock fileLock(FileChannel channel, long deadline) throws IOException {
        while (true) {
            FileLock lock = channel.tryLock();
            if (lock != null) return lock;
            if (System.nanoTime() >= deadline) throw lockTimeout();
            try {
                Thread.sleep(10);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new IncompatibleStateError("Interrupted while waiting for the storage lock " + directory.resolve(".lock") + ".", interrupted);
            }
        }
    }

    private IncompatibleStateError lockTimeout() {
        return new IncompatibleStateError("The storage lock " + directory.resolve(".lock") + " was held by another client (this process or another) for "
            + lockTimeoutMs + " ms, this storage's lock timeout; nothing was drawn or sent. Try again later, or end whatever holds it.");
    }
}
