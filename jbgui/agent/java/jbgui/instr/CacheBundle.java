package jbgui.instr;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

import jbgui.output.Utf8;

/**
 * The cached classes that the JVM loaded before the agent ({@link ClassCache}), in one file per
 * cache directory: start-up retransforms some 900 of them, and reading as many files of their own
 * cost about as much as the rest of the retransformation. One read of one file now serves them all.
 *
 * <p>Layout: a header (magic, version, entry count, then the length and CRC-32 of each of the two
 * regions), the <em>class region</em> and the <em>template region</em>. The class region holds per
 * entry the class name, the CRC-32 and length of its original class file (as a file of its own is
 * named by), where its template starts in the template region, and the class as
 * {@link CachedClass#writeHead} writes it. Start-up reads the header and the class region (a
 * quarter of the bytes) and checks its CRC; the writer thread reads the template region (static.xml)
 * later from the same open file, so a bundle that another JVM renames over this one meanwhile is
 * never mixed with it. Any problem (missing, truncated, damaged, another version) only means that
 * the classes come from their own files or are instrumented again; the bundle is then written anew
 * (to a temporary name, then renamed).
 */
final class CacheBundle {
    static final String FILE_NAME = "preloaded.jbb";
    /**
     * The JDK classes loaded while start-up instruments the loaded ones (ClassCache): on JDK 25,
     * whose verifier checks every class it redefines, some 340 classes the verifier loads; on JDK
     * 17 a few the agent itself loads. A bundle of their own, so that describing them reads its
     * small template region rather than the preloaded bundle's (some 20 MB, which the copy of
     * static.xml otherwise never reads).
     */
    static final String STARTUP_FILE_NAME = "startup.jbb";
    private static final int MAGIC = 0x4A424255; // "JBBU"
    private static final int VERSION = 1;
    private static final int HEADER = 32;

    /** One class of a bundle, or one to write into a bundle. */
    static final class Entry {
        final String name;
        final CachedClass cached;

        Entry(String name, CachedClass cached) {
            this.name = name;
            this.cached = cached;
        }
    }

    private final File path;
    private final RandomAccessFile file;
    private final byte[] classes;
    private final int count;
    /** Open addressing, no boxing (see CachedClass.ensureTemplate): names and their entries' offsets. */
    private final String[] names;
    private final int[] positions;
    private final long templatesAt;
    private final int templatesLength;
    private final int templatesCrc;
    private byte[] templates;
    private String damage;

    private CacheBundle(File path, RandomAccessFile file, byte[] classes, int count, long templatesAt, int templatesLength,
                        int templatesCrc) throws IOException {
        this.path = path;
        this.file = file;
        this.classes = classes;
        this.count = count;
        this.templatesAt = templatesAt;
        this.templatesLength = templatesLength;
        this.templatesCrc = templatesCrc;
        int capacity = Integer.highestOneBit(Math.max(4, count * 2)) * 2;
        names = new String[capacity];
        positions = new int[capacity];
        int p = 0;
        for (int i = 0; i < count; i++) {
            int nameLength = readInt(p, 4);
            String name = new String(classes, p + 4, nameLength, Utf8.CHARSET);
            p += 4 + nameLength;
            int record = readInt(p + 12, 4);
            put(name, p);
            p += 16 + record;
        }
        if (p != classes.length) {
            throw new IOException("bundle entries do not fill the class region");
        }
    }

    /** A non-negative int at {@code p} of the class region, with {@code need} bytes there. */
    private int readInt(int p, int need) throws IOException {
        if (p < 0 || p + need > classes.length) {
            throw new IOException("bundle entry out of bounds");
        }
        int v = CachedClass.getInt(classes, p);
        if (v < 0 || p + need + (long) v > classes.length) {
            throw new IOException("bundle entry out of bounds");
        }
        return v;
    }

    private void put(String name, int position) {
        int mask = names.length - 1;
        int i = name.hashCode() & mask;
        while (names[i] != null && !names[i].equals(name)) {
            i = (i + 1) & mask;
        }
        names[i] = name;
        positions[i] = position;
    }

    private int position(String name) {
        int mask = names.length - 1;
        for (int i = name.hashCode() & mask; names[i] != null; i = (i + 1) & mask) {
            if (names[i].equals(name)) {
                return positions[i];
            }
        }
        return -1;
    }

    /**
     * Reads the header and the class region of a bundle; null when there is none or it is not
     * sound. java.io only: this runs on the program's main thread (see ClassCache.load).
     */
    static CacheBundle open(File f) {
        if (!f.isFile()) {
            return null;
        }
        RandomAccessFile file = null;
        try {
            file = new RandomAccessFile(f, "r");
            byte[] h = new byte[HEADER];
            file.readFully(h);
            int count = CachedClass.getInt(h, 8);
            int classesLength = CachedClass.getInt(h, 12);
            int classesCrc = CachedClass.getInt(h, 16);
            int templatesLength = CachedClass.getInt(h, 20);
            int templatesCrc = CachedClass.getInt(h, 24);
            if (CachedClass.getInt(h, 0) != MAGIC || CachedClass.getInt(h, 4) != VERSION || count < 0
                    || classesLength < 0 || templatesLength < 0
                    || file.length() != (long) HEADER + classesLength + templatesLength) {
                throw new IOException("not a bundle of this version, or truncated");
            }
            byte[] classes = new byte[classesLength];
            file.readFully(classes);
            CRC32 crc = new CRC32();
            crc.update(classes, 0, classes.length);
            if ((int) crc.getValue() != classesCrc) {
                throw new IOException("damaged class region");
            }
            return new CacheBundle(f, file, classes, count, HEADER + (long) classesLength, templatesLength, templatesCrc);
        } catch (IOException | RuntimeException e) {
            if (file != null) {
                try {
                    file.close();
                } catch (IOException ignored) {
                    // nothing to do
                }
            }
            return null;
        }
    }

    int size() {
        return count;
    }

    /** The number of method ids the bundle's entry for this class takes, or -1 when there is none. */
    int idCount(String name) {
        int p = position(name);
        if (p < 0 || p + 16 + 16 > classes.length) {
            return -1;
        }
        int n = CachedClass.getInt(classes, p + 16 + 12);
        return n < 0 ? -1 : n;
    }

    /** The bundle's entry for this class, whatever the original class file now is; else null. */
    CachedClass byName(String name) {
        int p = position(name);
        return p < 0 ? null : entryAt(p);
    }

    /** The class, when the bundle holds it for exactly this original class file; else null. */
    CachedClass find(String name, int crc, int length) {
        int p = position(name);
        if (p < 0 || CachedClass.getInt(classes, p) != crc || CachedClass.getInt(classes, p + 4) != length) {
            return null;
        }
        return entryAt(p);
    }

    private CachedClass entryAt(int p) {
        try {
            int record = CachedClass.getInt(classes, p + 12);
            CachedClass c = CachedClass.readFromBundle(classes, p + 16, p + 16 + record, this,
                    CachedClass.getInt(classes, p + 8));
            c.originalCrc = CachedClass.getInt(classes, p);
            c.originalLength = CachedClass.getInt(classes, p + 4);
            return c;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Every class of the bundle (to keep those this run did not load when the bundle is written anew). */
    List<Entry> entries() {
        List<Entry> out = new ArrayList<>(count);
        for (int i = 0; i < names.length; i++) {
            if (names[i] != null) {
                CachedClass c = entryAt(positions[i]);
                if (c != null) {
                    out.add(new Entry(names[i], c));
                }
            }
        }
        return out;
    }

    /** The template region, read (once, on the writer thread) from the file the class region came from. */
    /**
     * Closes the file when its templates were never read and will not be: the descriptions of
     * its classes were copied whole (PreloadedLayout). A later {@link #templates} call fails.
     */
    synchronized void closeUnread() {
        if (templates != null || damage != null) {
            return;
        }
        damage = "closed unread: its classes' descriptions were copied";
        try {
            file.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    synchronized byte[] templates() throws CachedClass.DamagedTemplate {
        if (templates != null) {
            return templates;
        }
        if (damage == null) {
            try {
                byte[] t = new byte[templatesLength];
                file.seek(templatesAt);
                file.readFully(t);
                CRC32 crc = new CRC32();
                crc.update(t, 0, t.length);
                if ((int) crc.getValue() != templatesCrc) {
                    throw new IOException("damaged template region");
                }
                templates = t;
            } catch (IOException | RuntimeException e) {
                damage = String.valueOf(e.getMessage());
                // Every class it served is described afresh; the next run must not meet it again
                // (it serves all their classes, so this run does not write it anew).
                path.delete();
            } finally {
                try {
                    file.close();
                } catch (IOException ignored) {
                    // nothing to do
                }
            }
        }
        if (templates == null) {
            throw new CachedClass.DamagedTemplate("bundle: " + damage);
        }
        return templates;
    }

    /**
     * Writes a bundle of these classes into {@code dir} (a temporary file, then renamed). A class
     * whose template cannot be read is left out. Runs on the writer thread.
     */
    static void write(File dir, String fileName, List<Entry> entries) {
        File target = new File(dir, fileName);
        File tmp = new File(dir, fileName + "." + jbgui.runtime.Config.pid() + ".tmp");
        try {
            ByteArrayOutputStream classes = new ByteArrayOutputStream(1 << 20);
            CRC32 templatesCrc = new CRC32();
            List<Entry> kept = new ArrayList<>(entries.size());
            long templateAt = 0;
            byte[] four = new byte[4];
            for (Entry e : entries) {
                CachedClass c = e.cached;
                int length;
                ByteArrayOutputStream record = new ByteArrayOutputStream(c.bytesLength + 1024);
                try {
                    length = c.templateLength();
                    c.writeHead(record);
                } catch (IOException damaged) {
                    continue;
                }
                if (templateAt + length > Integer.MAX_VALUE - HEADER) {
                    break;
                }
                byte[] name = e.name.getBytes(Utf8.CHARSET);
                writeInt(classes, four, name.length);
                classes.write(name);
                writeInt(classes, four, c.originalCrc);
                writeInt(classes, four, c.originalLength);
                writeInt(classes, four, (int) templateAt);
                writeInt(classes, four, record.size());
                record.writeTo(classes);
                c.updateTemplate(templatesCrc);
                templateAt += length;
                kept.add(e);
            }
            byte[] region = classes.toByteArray();
            CRC32 classesCrc = new CRC32();
            classesCrc.update(region, 0, region.length);
            byte[] h = new byte[HEADER];
            int[] header = {MAGIC, VERSION, kept.size(), region.length, (int) classesCrc.getValue(), (int) templateAt,
                    (int) templatesCrc.getValue(), 0};
            for (int i = 0; i < header.length; i++) {
                CachedClass.putInt(h, 4 * i, header[i]);
            }
            if (!dir.isDirectory() && !dir.mkdirs() && !dir.isDirectory()) {
                return;
            }
            try (OutputStream out = new BufferedOutputStream(new FileOutputStream(tmp), 1 << 16)) {
                out.write(h);
                out.write(region);
                for (Entry e : kept) {
                    e.cached.writeTemplate(out);
                }
            }
            if (!tmp.renameTo(target)) {
                tmp.delete();
            }
        } catch (IOException | RuntimeException e) {
            tmp.delete();
        }
    }

    private static void writeInt(ByteArrayOutputStream out, byte[] four, int v) {
        CachedClass.putInt(four, 0, v);
        out.write(four, 0, 4);
    }
}
