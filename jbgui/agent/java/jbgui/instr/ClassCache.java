package jbgui.instr;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.util.zip.CRC32;

/**
 * Instrumented JDK classes kept on disk between runs ({@link CachedClass}). One directory per
 * (agent build, JDK, instrumentation options); one file per class, named after the class and the
 * CRC-32 and length of its original bytes, so a changed class file never meets a stale entry.
 * Files are written to a temporary name and renamed, so concurrent JVMs never read half a file.
 * Any problem with the cache only means instrumenting again.
 */
public final class ClassCache {
    private final File dir;
    private volatile boolean usable = true;

    public ClassCache(File dir) {
        this.dir = dir;
    }

    public File directory() {
        return dir;
    }

    private File file(String className, byte[] original) {
        CRC32 crc = new CRC32();
        crc.update(original, 0, original.length);
        String name = className.replace('/', '.');
        if (name.length() > 180) {
            name = name.substring(0, 100) + "~" + Integer.toHexString(name.hashCode());
        }
        return new File(dir, name + "@" + Long.toHexString(crc.getValue()) + "-" + original.length + ".jbc");
    }

    CachedClass load(String className, byte[] original) {
        if (!usable) {
            return null;
        }
        File f = file(className, original);
        if (!f.isFile()) {
            return null;
        }
        // FileInputStream, not java.nio.file.Files: NIO keeps a per-thread buffer cache that the
        // program's thread would later clean up at its exit, in the trace (trace neutrality).
        try (FileInputStream in = new FileInputStream(f)) {
            byte[] data = new byte[(int) f.length()];
            int n = 0;
            while (n < data.length) {
                int r = in.read(data, n, data.length - n);
                if (r < 0) {
                    throw new IOException("short read");
                }
                n += r;
            }
            return CachedClass.read(data);
        } catch (IOException | RuntimeException e) {
            f.delete();
            return null;
        }
    }

    void store(String className, byte[] original, CachedClass c) {
        if (!usable) {
            return;
        }
        File f = file(className, original);
        File tmp = new File(dir, f.getName() + "." + jbgui.runtime.Config.pid() + ".tmp");
        try {
            if (!dir.isDirectory() && !dir.mkdirs() && !dir.isDirectory()) {
                usable = false;
                return;
            }
            try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(tmp), 1 << 16))) {
                c.write(out);
            }
            if (!tmp.renameTo(f)) {
                tmp.delete();
            }
        } catch (IOException | RuntimeException e) {
            tmp.delete();
        }
    }
}
