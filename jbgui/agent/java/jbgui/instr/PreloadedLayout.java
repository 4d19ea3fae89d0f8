package jbgui.instr;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

import jbgui.output.Utf8;
import jbgui.output.XmlFragment;

/**
 * The classes loaded before the agent, numbered the same way in every run, so that their part
 * of static.xml is the same bytes every time and is copied from the class cache instead of being
 * written class by class.
 *
 * <p>Why: those some 770 classes make a hello world's static.xml 18 MB, and relocating their
 * cached templates (CachedClass#writeTo) cost the writer thread ~180 ms of CPU in a run that
 * takes 0.6 s, on a machine whose second core the retransformation already uses. The engine
 * reserves each class's class id and method ids in name order before the retransformation
 * ({@link #add}), the transformer (or the engine, for a class it redefines with the bundle's
 * bytes) hands each class's description to its slot ({@link #fill})
 * instead of queueing it, and {@link #fragment} writes them all at once: the cached copy when
 * its signature (every slot's name, class id, first method id, id count and original class
 * file's CRC) is this run's, else each class's description, kept as the new copy.
 *
 * <p>Anything unusual (a class not in the bundle, another id count, a class the JVM never
 * handed to the transformer) only means the slow way: slots are a numbering, never a guess.
 */
public final class PreloadedLayout {
    static final String FILE_NAME = "preloaded-xml.jbx";
    private static final int MAGIC = 0x4A424C58; // "JBLX"
    private static final int VERSION = 1;
    private static final int HEADER = 24;

    /** One class's reserved numbering and, once the transformer saw it, its description. */
    public static final class Slot {
        public final String name;
        public final int classId;
        public final int firstId;
        public final int idCount;
        private Object xml;
        private int originalCrc;
        private boolean filled;

        Slot(String name, int classId, int firstId, int idCount) {
            this.name = name;
            this.classId = classId;
            this.firstId = firstId;
            this.idCount = idCount;
        }

        public boolean filled() {
            return filled;
        }
    }

    private final File dir;
    private final Slot[] slots;
    private int count;
    /** Open addressing, class id → slot index + 1 (0: none); filled before the transformer runs. */
    private final int[] byClassKeys;
    private final int[] byClassValues;
    private String broken;

    public PreloadedLayout(File dir, int capacity) {
        this.dir = dir;
        this.slots = new Slot[capacity];
        int table = Integer.highestOneBit(Math.max(4, capacity * 2)) * 2;
        byClassKeys = new int[table];
        byClassValues = new int[table];
    }

    /** Reserves the next slot: call in the order the slots are to have, before any {@link #slot}. */
    public void add(String name, int classId, int firstId, int idCount) {
        slots[count] = new Slot(name, classId, firstId, idCount);
        int mask = byClassKeys.length - 1;
        int i = classId & mask;
        while (byClassValues[i] != 0 && byClassKeys[i] != classId) {
            i = (i + 1) & mask;
        }
        byClassKeys[i] = classId;
        byClassValues[i] = ++count;
    }

    public int size() {
        return count;
    }

    /** The slot reserved for this class id, or null. */
    public Slot slot(int classId) {
        int mask = byClassKeys.length - 1;
        for (int i = classId & mask; byClassValues[i] != 0; i = (i + 1) & mask) {
            if (byClassKeys[i] == classId) {
                return slots[byClassValues[i] - 1];
            }
        }
        return null;
    }

    /**
     * The class of this slot was instrumented with the reserved ids: its description, and the
     * CRC-32 of the class file it was made from (0: not known, which rules the copy out).
     */
    public synchronized void fill(Slot s, Object xml, int originalCrc) {
        s.xml = xml;
        s.originalCrc = originalCrc;
        s.filled = true;
        if (originalCrc == 0) {
            breakLayout(s.name + " has no class file checksum");
        }
    }

    /** The slot's class is to be described again (its first description did not hold). */
    public synchronized void unfill(Slot s) {
        s.xml = null;
        s.originalCrc = 0;
        s.filled = false;
    }

    /** This run's descriptions cannot be the cached copy's (the reason goes to agent.log). */
    public synchronized void breakLayout(String why) {
        if (broken == null) {
            broken = why;
        }
    }

    /** The slots the transformer never saw (their classes were not retransformed). */
    public synchronized List<Slot> unfilled() {
        List<Slot> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            if (!slots[i].filled) {
                out.add(slots[i]);
            }
        }
        return out;
    }

    /**
     * What writes the descriptions of every filled slot into static.xml, on the writer thread;
     * {@code log} receives one line for agent.log, {@code afterCopy} runs when the cached copy
     * was used (may be null). Call once the retransformation is over.
     */
    public synchronized XmlFragment fragment(final Log log, final Runnable afterCopy) {
        final Slot[] filled = filledSlots();
        final boolean copyable = broken == null && filled.length == count && count > 0;
        final long signature = copyable ? signature(filled) : 0;
        if (!copyable) {
            closeChecked();
        }
        final String why = broken != null ? broken : filled.length < count ? (count - filled.length) + " classes not retransformed" : null;
        return new XmlFragment() {
            @Override
            public void writeTo(OutputStream out) throws IOException {
                long began = System.nanoTime();
                if (!copyable) {
                    for (Slot s : filled) {
                        describe(s, out, log);
                    }
                    log.line("info: static.xml of " + filled.length + " classes loaded before the agent written class by class (" + why + ")");
                    return;
                }
                long copied = copy(signature, out);
                if (copied >= 0) {
                    if (afterCopy != null) {
                        afterCopy.run();
                    }
                    log.line("info: static.xml of " + filled.length + " classes loaded before the agent copied from the class cache ("
                            + copied + " bytes, " + (System.nanoTime() - began) / 1_000_000 + " ms)");
                    return;
                }
                boolean kept = describeAndKeep(filled, signature, out, log);
                log.line("info: static.xml of " + filled.length + " classes loaded before the agent written class by class ("
                        + (kept ? "kept in the class cache for the next run" : "could not keep it in the class cache") + ", "
                        + (System.nanoTime() - began) / 1_000_000 + " ms)");
            }
        };
    }

    /**
     * Whether the cached copy is sound and is this run's, as the slots now stand: every slot
     * filled, the layout not broken. (The engine redefines classes without their original bytes
     * only when their descriptions will not need the bundle's templates, or those are sound.)
     */
    public synchronized boolean copyReady() {
        Slot[] filled = filledSlots();
        if (broken != null || filled.length != count || count == 0) {
            return false;
        }
        closeChecked();
        File f = new File(dir, FILE_NAME);
        if (!f.isFile()) {
            return false; // not opened to find out: FileNotFoundException would load only in such runs
        }
        RandomAccessFile in = null;
        try {
            in = new RandomAccessFile(f, "r");
            long signature = signature(filled);
            if (sound(in, new byte[1 << 16], signature, in.length())) {
                // Kept open for the writer: the file checked is the file copied.
                checked = in;
                checkedSignature = signature;
                return true;
            }
        } catch (IOException e) {
            // no copy, or not readable: as if none
        }
        close(in);
        return false;
    }

    /** The copy {@link #copyReady} found sound, open, and the signature it had then; else null. */
    private RandomAccessFile checked;
    private long checkedSignature;

    private void closeChecked() {
        close(checked);
        checked = null;
    }

    private static void close(RandomAccessFile f) {
        if (f != null) {
            try {
                f.close();
            } catch (IOException ignored) {
                // nothing to do
            }
        }
    }

    /** Where {@link #fragment} says what it did. */
    public interface Log {
        void line(String text);
    }

    private Slot[] filledSlots() {
        int n = 0;
        for (int i = 0; i < count; i++) {
            n += slots[i].filled ? 1 : 0;
        }
        Slot[] out = new Slot[n];
        n = 0;
        for (int i = 0; i < count; i++) {
            if (slots[i].filled) {
                out[n++] = slots[i];
            }
        }
        return out;
    }

    /** One class's description; a class that cannot be described costs only its own. */
    private static boolean describe(Slot s, OutputStream out, Log log) throws IOException {
        try {
            if (s.xml instanceof XmlFragment) {
                ((XmlFragment) s.xml).writeTo(out);
            } else {
                out.write(String.valueOf(s.xml).getBytes(Utf8.CHARSET));
            }
            return true;
        } catch (CachedClass.DamagedTemplate e) {
            log.line("error: static information of " + s.name + " lost: " + e.getMessage());
            return false;
        }
    }

    /** FNV-1a, 64 bits, over every slot's numbering and class file checksum, in slot order. */
    static long signature(Slot[] filled) {
        long h = 0xcbf29ce484222325L;
        for (Slot s : filled) {
            byte[] name = s.name.getBytes(Utf8.CHARSET);
            for (byte b : name) {
                h = (h ^ (b & 0xFF)) * 0x100000001b3L;
            }
            int[] values = {0, s.classId, s.firstId, s.idCount, s.originalCrc};
            for (int v : values) {
                for (int k = 0; k < 32; k += 8) {
                    h = (h ^ ((v >>> k) & 0xFF)) * 0x100000001b3L;
                }
            }
        }
        return h;
    }

    /**
     * Writes the cached copy to {@code out} when it is sound and has this signature, and returns
     * its length; else writes nothing and returns -1. Read twice in small pieces, its checksum
     * first: a 17 MB array (and the JDK's native copy of it on each side) cost twice the time.
     */
    private long copy(long signature, OutputStream out) throws IOException {
        RandomAccessFile in;
        synchronized (this) {
            in = checked != null && checkedSignature == signature ? checked : null;
            checked = null;
        }
        byte[] piece = new byte[1 << 16];
        if (in == null) {
            File f = new File(dir, FILE_NAME);
            if (!f.isFile()) {
                return -1;
            }
            try {
                in = new RandomAccessFile(f, "r");
            } catch (IOException e) {
                return -1;
            }
            if (!sound(in, piece, signature, in.length())) {
                close(in);
                return -1;
            }
        }
        // The file checked is the open one: a copy another JVM renames over it meanwhile is
        // another file, and this one cannot shrink (copies are only ever renamed into place).
        try (RandomAccessFile open = in) {
            long length = open.length();
            open.seek(HEADER);
            long left = length - HEADER;
            while (left > 0) {
                int n = open.read(piece, 0, (int) Math.min(piece.length, left));
                if (n <= 0) {
                    throw new IOException("the copy ended " + left + " bytes early while it was copied");
                }
                out.write(piece, 0, n);
                left -= n;
            }
            return length - HEADER;
        }
    }

    /** Whether the open copy has this signature, the length its header says and its checksum. */
    private static boolean sound(RandomAccessFile in, byte[] piece, long signature, long length) {
        try {
            in.readFully(piece, 0, HEADER);
            if (CachedClass.getInt(piece, 0) != MAGIC || CachedClass.getInt(piece, 4) != VERSION
                    || getLong(piece, 8) != signature || CachedClass.getInt(piece, 16) != length - HEADER) {
                return false;
            }
            int expected = CachedClass.getInt(piece, 20);
            CRC32 crc = new CRC32();
            for (int n; (n = in.read(piece)) > 0; ) {
                crc.update(piece, 0, n);
            }
            return (int) crc.getValue() == expected && in.getFilePointer() == length;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Writes the slots' descriptions to {@code out} and, as they go, to a new copy (a temporary
     * file, renamed into place once whole): not gathered in memory first, since the program's
     * heap may be small. Returns whether the copy was kept. A failure to write the copy never
     * stops the descriptions reaching static.xml.
     */
    private boolean describeAndKeep(Slot[] filled, long signature, OutputStream out, Log log) throws IOException {
        File tmp = new File(dir, FILE_NAME + "." + jbgui.runtime.Config.pid() + ".tmp");
        Tee tee = new Tee(out, tmp);
        boolean whole = true;
        for (Slot s : filled) {
            whole &= describe(s, tee, log);
        }
        if (!tee.finish(signature) || !whole) {
            tmp.delete();
            return false;
        }
        if (!tmp.renameTo(new File(dir, FILE_NAME))) {
            tmp.delete();
            return false;
        }
        return true;
    }

    /** Passes bytes on to static.xml, and keeps them in the new copy while it can. */
    private static final class Tee extends OutputStream {
        private final OutputStream out;
        private final File file;
        private RandomAccessFile copy;
        private final CRC32 crc = new CRC32();
        private long length;

        Tee(OutputStream out, File file) {
            this.out = out;
            this.file = file;
            try {
                File dir = file.getParentFile();
                if (dir.isDirectory() || dir.mkdirs()) {
                    copy = new RandomAccessFile(file, "rw");
                    copy.setLength(0);
                    copy.write(new byte[HEADER]);
                }
            } catch (IOException | RuntimeException e) {
                drop();
            }
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            if (copy != null) {
                try {
                    copy.write(b, off, len);
                    crc.update(b, off, len);
                    length += len;
                } catch (IOException e) {
                    drop();
                }
            }
        }

        /** Writes the header; false when the copy was dropped or is too long to keep. */
        boolean finish(long signature) {
            if (copy == null || length > Integer.MAX_VALUE - HEADER) {
                drop();
                return false;
            }
            byte[] head = new byte[HEADER];
            CachedClass.putInt(head, 0, MAGIC);
            CachedClass.putInt(head, 4, VERSION);
            CachedClass.putInt(head, 8, (int) (signature >>> 32));
            CachedClass.putInt(head, 12, (int) signature);
            CachedClass.putInt(head, 16, (int) length);
            CachedClass.putInt(head, 20, (int) crc.getValue());
            try {
                copy.seek(0);
                copy.write(head);
                copy.close();
                copy = null;
                return true;
            } catch (IOException e) {
                drop();
                return false;
            }
        }

        private void drop() {
            if (copy != null) {
                try {
                    copy.close();
                } catch (IOException ignored) {
                    // the copy is given up anyway
                }
                copy = null;
            }
        }
    }

    private static long getLong(byte[] b, int at) {
        return ((long) CachedClass.getInt(b, at) << 32) | (CachedClass.getInt(b, at + 4) & 0xFFFFFFFFL);
    }
}
