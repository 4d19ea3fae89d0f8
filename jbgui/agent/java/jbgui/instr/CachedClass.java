package jbgui.instr;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.objectweb.asm.ClassReader;

import jbgui.runtime.EventLayout;

/**
 * A class instrumented with method ids relative to 1, ready to be relocated to the ids one run
 * assigns. The relocation patches the event constants in the constant pool (each method loads its
 * start word with {@code ldc}, and the class writer appends these ints after the original pool),
 * and fills the ids into a template of the class's static.xml body. Being independent of the run,
 * it can be kept on disk ({@link ClassCache}) and reused by the next run: start-up then no longer
 * pays for instrumenting the classes the JVM loaded before the agent.
 */
final class CachedClass {
    static final char MARK_METHOD = '\u0001';
    static final char MARK_BLOCK = '\u0003';
    static final char MARK_END = '\u0002';

    /**
     * Instrumented class file with relative ids: {@code bytes[bytesAt, bytesAt + bytesLength)}. A
     * class read from the cache is a view into the bytes read from disk (a bundle holds hundreds).
     */
    byte[] bytes;
    int bytesAt;
    int bytesLength;
    /** Offsets (from the class file's start) of the 4-byte event constants, and whether each is an extended word. */
    int[] offsets;
    boolean[] extendedWord;
    /** Method ids the class needs. */
    int idCount;
    boolean instrumented;
    List<String> warnings = new ArrayList<>();
    /** Attributes of {@code <class>} that depend only on the class file. */
    String classAttributes;
    /** The original class file's CRC-32 and length: the cache's key beside the class name. */
    int originalCrc;
    int originalLength;
    /** Served by a bundle ({@link CacheBundle}). */
    boolean fromBundle;

    /**
     * The XML body (methods) split at its ids, in its on-disk layout at {@code tpl[tplAt..]}:
     * {@link #tplParts} part lengths (ints), the parts' text ({@link #tplText} bytes), then per id a
     * kind byte ({@link #MARK_METHOD} or {@link #MARK_BLOCK}) and a value (long), relative to method
     * id 1. Written as part {@code 0}, id {@code 0}, part {@code 1} … Null until produced: by the
     * writer thread, from {@link #source} (a class just instrumented) or from the bundle's template
     * region (a class the bundle served); a class read from its own file has it from the start.
     */
    private byte[] tpl;
    private int tplAt;
    private int tplParts;
    private int tplText;
    /** The template is in {@link #tpl} and checked. */
    private boolean tplReady;
    /** Produces the template on first use (the writer thread), when it is not loaded from disk. */
    TemplateSource source;
    /** The bundle whose template region holds this class's template, at {@link #tplAt}. */
    private CacheBundle bundle;
    /**
     * The cache entry whose file holds this class's template, at {@link #tplAt}, ending the file
     * ({@link #read}): read by the writer thread when it describes the class, not by the program's
     * thread that loads it.
     */
    private java.io.File tplFile;

    interface TemplateSource {
        /** The body with each id written as MARK, digits, MARK_END. */
        String template();
    }

    /** The template cannot be read: the cache is damaged (the caller describes the class afresh). */
    static final class DamagedTemplate extends IOException {
        DamagedTemplate(String message) {
            super(message);
        }
    }

    /** Bytes of the template in its on-disk layout. */
    int templateLength() throws IOException {
        ensureTemplate();
        return (int) templateBytes(tplParts, tplText);
    }

    /** Bytes of a template of {@code parts} parts and {@code text} bytes of text, laid out on disk. */
    private static long templateBytes(int parts, int text) {
        return 4L * parts + text + 9L * (parts - 1);
    }

    private synchronized void ensureTemplate() throws IOException {
        if (tplReady) {
            return;
        }
        if (tplFile != null) {
            tpl = readTemplate(tplFile, tplAt, templateBytes(tplParts, tplText));
            tplAt = 0;
            tplFile = null;
        }
        if (tpl != null || bundle != null) {
            byte[] region = tpl != null ? tpl : bundle.templates();
            checkTemplate(region, tplAt, tplParts, tplText);
            tpl = region;
            bundle = null;
            tplReady = true;
            return;
        }
        if (source == null) {
            throw new DamagedTemplate("no template");
        }
        String t = source.template();
        source = null;
        // No boxing here: Long.valueOf may load Long$LongCache, whose transformation would come
        // back to this code on the same thread (ClassCircularityError on JDK 25).
        List<byte[]> p = new ArrayList<>();
        long[] v = new long[16];
        StringBuilder k = new StringBuilder();
        int count = 0;
        int text = 0;
        int i = 0;
        while (true) {
            int m = nextMark(t, i);
            byte[] part = t.substring(i, m < 0 ? t.length() : m).getBytes(jbgui.output.Utf8.CHARSET);
            p.add(part);
            text += part.length;
            if (m < 0) {
                break;
            }
            int end = t.indexOf(MARK_END, m);
            k.append(t.charAt(m));
            if (count == v.length) {
                v = java.util.Arrays.copyOf(v, count * 2);
            }
            v[count++] = Long.parseLong(t.substring(m + 1, end));
            i = end + 1;
        }
        byte[] out = new byte[4 * p.size() + text + 9 * count];
        int at = 0;
        for (byte[] part : p) {
            putInt(out, at, part.length);
            at += 4;
        }
        for (byte[] part : p) {
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        for (int j = 0; j < count; j++) {
            out[at++] = (byte) k.charAt(j);
        }
        for (int j = 0; j < count; j++) {
            putInt(out, at, (int) (v[j] >>> 32));
            putInt(out, at + 4, (int) v[j]);
            at += 8;
        }
        tplParts = p.size();
        tplText = text;
        tplAt = 0;
        tpl = out;
        tplReady = true;
    }

    /** A template as read from disk: its parts must add up to its text, its kinds be known. */
    private static void checkTemplate(byte[] b, int at, int parts, int text) throws DamagedTemplate {
        long need = templateBytes(parts, text);
        if (parts < 1 || text < 0 || at < 0 || at + need > b.length) {
            throw new DamagedTemplate("template out of bounds");
        }
        long sum = 0;
        for (int i = 0; i < parts; i++) {
            int n = getInt(b, at + 4 * i);
            if (n < 0) {
                throw new DamagedTemplate("negative part");
            }
            sum += n;
        }
        int kinds = at + 4 * parts + text;
        for (int i = 0; i < parts - 1; i++) {
            if (b[kinds + i] != MARK_METHOD && b[kinds + i] != MARK_BLOCK) {
                throw new DamagedTemplate("unknown id kind");
            }
        }
        if (sum != text) {
            throw new DamagedTemplate("parts do not add up");
        }
    }

    private static int nextMark(String t, int from) {
        int a = t.indexOf(MARK_METHOD, from);
        int b = t.indexOf(MARK_BLOCK, from);
        return a < 0 ? b : b < 0 ? a : Math.min(a, b);
    }

    static int getInt(byte[] b, int p) {
        return ((b[p] & 0xFF) << 24) | ((b[p + 1] & 0xFF) << 16) | ((b[p + 2] & 0xFF) << 8) | (b[p + 3] & 0xFF);
    }

    static void putInt(byte[] b, int p, int v) {
        b[p] = (byte) (v >>> 24);
        b[p + 1] = (byte) (v >>> 16);
        b[p + 2] = (byte) (v >>> 8);
        b[p + 3] = (byte) v;
    }

    /** The class file with ids starting at {@code base}. */
    byte[] relocate(int base) {
        byte[] out = java.util.Arrays.copyOfRange(bytes, bytesAt, bytesAt + bytesLength);
        int delta = base - 1;
        for (int i = 0; i < offsets.length; i++) {
            int p = offsets[i];
            int word = getInt(out, p);
            putInt(out, p, word + (extendedWord[i] ? delta : delta << EventLayout.METHOD_SHIFT));
        }
        return out;
    }

    /**
     * Writes the {@code <class>} element for static.xml, with ids starting at {@code base}.
     * Throws {@link DamagedTemplate}, before writing anything, when the template cannot be read.
     */
    void writeTo(java.io.OutputStream out, ClassPlan plan, int base, String status) throws java.io.IOException {
        ensureTemplate();
        byte[] open = plan.openTag(classAttributes, status).getBytes(jbgui.output.Utf8.CHARSET);
        // The element is built in one array and written with one call: the output stream's write
        // is synchronized, and a big class has tens of thousands of parts.
        int ids = tplParts - 1;
        byte[] x = new byte[open.length + tplText + 20 * ids + CLASS_END.length];
        System.arraycopy(open, 0, x, 0, open.length);
        int n = open.length;
        long delta = base - 1;
        byte[] t = tpl;
        int lengths = tplAt;
        int at = tplAt + 4 * tplParts;
        int kinds = at + tplText;
        int values = kinds + ids;
        for (int i = 0; i < ids; i++) {
            int len = getInt(t, lengths + 4 * i);
            System.arraycopy(t, at, x, n, len);
            n += len;
            at += len;
            long v = ((long) getInt(t, values + 8 * i) << 32) | (getInt(t, values + 8 * i + 4) & 0xFFFFFFFFL);
            v += t[kinds + i] == MARK_METHOD ? delta : delta << EventLayout.METHOD_SHIFT;
            // Digits from the right, then moved into place (ids are positive, at most 19 digits).
            int end = n + 20;
            int d = end;
            do {
                x[--d] = (byte) ('0' + (v % 10));
                v /= 10;
            } while (v > 0);
            System.arraycopy(x, d, x, n, end - d);
            n += end - d;
        }
        int last = getInt(t, lengths + 4 * ids);
        System.arraycopy(t, at, x, n, last);
        n += last;
        System.arraycopy(CLASS_END, 0, x, n, CLASS_END.length);
        out.write(x, 0, n + CLASS_END.length);
    }

    private static final byte[] CLASS_END = "</class>\n".getBytes(jbgui.output.Utf8.CHARSET);

    /**
     * Finds the event constants that instrumentation added: the pool's ints that the original
     * class did not have. Returns false when an original int has the shape of one of our event
     * words (they would share one pool entry, and relocating it would change the program).
     */
    boolean locateConstants(byte[] original) {
        java.util.Set<Integer> originalInts = new java.util.HashSet<>();
        for (int[] c : ints(original)) {
            int v = c[1];
            if (looksLikeOurs(v)) {
                return false;
            }
            originalInts.add(v);
        }
        List<int[]> ours = new ArrayList<>();
        for (int[] c : ints(bytes)) {
            if (!originalInts.contains(c[1])) {
                ours.add(c);
            }
        }
        offsets = new int[ours.size()];
        extendedWord = new boolean[ours.size()];
        for (int i = 0; i < ours.size(); i++) {
            offsets[i] = ours.get(i)[0];
            extendedWord[i] = (ours.get(i)[1] >>> EventLayout.TYPE_SHIFT) == EventLayout.TYPE_EXTENDED;
        }
        return true;
    }

    private boolean looksLikeOurs(int v) {
        int type = v >>> EventLayout.TYPE_SHIFT;
        if (type == EventLayout.TYPE_EXTENDED) {
            int value = v & EventLayout.VALUE_MASK;
            return (v >>> EventLayout.SUBTYPE_SHIFT) == EventLayout.EXT_EXCEPTION_EXIT && value >= 1 && value <= idCount;
        }
        int method = (v >>> EventLayout.METHOD_SHIFT) & EventLayout.MAX_METHOD_ID;
        return method >= 1 && method <= idCount;
    }

    /** (offset of the value, value) of every CONSTANT_Integer in a class file's pool. */
    private static List<int[]> ints(byte[] classFile) {
        ClassReader cr = new ClassReader(AsmSupport.readable(classFile));
        List<int[]> out = new ArrayList<>();
        for (int i = 1; i < cr.getItemCount(); i++) {
            int offset = cr.getItem(i);
            if (offset > 0 && classFile[offset - 1] == 3) { // CONSTANT_Integer
                out.add(new int[] {offset, cr.readInt(offset)});
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ on disk

    private static final int MAGIC = 0x4A424345; // "JBCE": version 3, bulk layout
    /** The fixed header: magic and seven counts. */
    static final int HEADER = 32;

    /**
     * One entry, in a file of its own ({@link ClassCache}): the header and the class
     * ({@link #writeHead}), then the template ({@link #writeTemplate}). A bundle
     * ({@link CacheBundle}) keeps the two apart: start-up needs only the first.
     */
    void write(java.io.OutputStream out) throws IOException {
        writeHead(out);
        writeTemplate(out);
    }

    /**
     * The header, then every array as one block of bytes, so that reading it back is a handful of
     * bulk copies (start-up reads a thousand of these, mostly in interpreted code).
     */
    void writeHead(java.io.OutputStream out) throws IOException {
        ensureTemplate();
        byte[] attrs = classAttributes.getBytes(jbgui.output.Utf8.CHARSET);
        StringBuilder w = new StringBuilder();
        for (String warning : warnings) {
            w.append(warning).append('\n');
        }
        byte[] warn = w.toString().getBytes(jbgui.output.Utf8.CHARSET);
        byte[] b = new byte[HEADER + bytesLength + 5 * offsets.length + attrs.length + warn.length];
        int[] header = {MAGIC, bytesLength, offsets.length, idCount, attrs.length, warn.length, tplParts, tplText};
        for (int i = 0; i < header.length; i++) {
            putInt(b, 4 * i, header[i]);
        }
        int at = HEADER;
        System.arraycopy(bytes, bytesAt, b, at, bytesLength);
        at += bytesLength;
        for (int o : offsets) {
            putInt(b, at, o);
            at += 4;
        }
        for (boolean e : extendedWord) {
            b[at++] = (byte) (e ? 1 : 0);
        }
        System.arraycopy(attrs, 0, b, at, attrs.length);
        at += attrs.length;
        System.arraycopy(warn, 0, b, at, warn.length);
        out.write(b);
    }

    /** The template in its on-disk layout (part lengths, text, kinds, values). */
    void writeTemplate(java.io.OutputStream out) throws IOException {
        out.write(tpl, tplAt, templateLength());
    }

    /** Feeds the template's bytes to a checksum (the bundle's, computed before it is written). */
    void updateTemplate(java.util.zip.CRC32 crc) throws IOException {
        crc.update(tpl, tplAt, templateLength());
    }

    /**
     * An entry read from its own file, {@code fileLength} bytes long, of which {@code head} holds
     * the start up to the template ({@link #headLength}); the template, which ends the file, is
     * read when the writer first needs it.
     *
     * <p>Why: the template is most of an entry, and only the writer uses it. jEdit's start-up read
     * 69.5 MB of entries for 2,730 classes on the threads that loaded them (184 ms); reading the
     * heads only, the cache's part of the transformer's time went from 341 to about 265 ms.
     */
    static CachedClass read(byte[] head, java.io.File file, long fileLength) throws IOException {
        CachedClass c = new CachedClass();
        int end = c.readHead(head, 0, head.length);
        long need = templateBytes(c.tplParts, c.tplText); // readHead checked tplParts >= 1
        if (end != head.length || fileLength - end != need) {
            throw new IOException("damaged cached class");
        }
        // The template (tens of thousands of small parts for a big class) is checked later, by
        // the writer, when it reads it.
        c.tplFile = file;
        c.tplAt = end;
        return c;
    }

    /**
     * The length of an entry's head (the header, the class file, the constants' offsets and
     * kinds, the attributes and warnings: all but the template) from its first {@link #HEADER}
     * bytes; -1 when they are not an entry's.
     */
    static long headLength(byte[] header) {
        if (header.length < HEADER || getInt(header, 0) != MAGIC) {
            return -1;
        }
        long length = getInt(header, 4);
        long n = getInt(header, 8);
        long attrs = getInt(header, 16);
        long warn = getInt(header, 20);
        if (length < 0 || n < 0 || attrs < 0 || warn < 0) {
            return -1;
        }
        return HEADER + length + 5 * n + attrs + warn;
    }

    /** The template's {@code length} bytes at {@code at} of an entry's file, which must end there. */
    private static byte[] readTemplate(java.io.File file, int at, long length) throws DamagedTemplate {
        // FileInputStream, not java.nio.file.Files (ClassCache.load says why).
        try (java.io.FileInputStream in = new java.io.FileInputStream(file)) {
            if (length > Integer.MAX_VALUE - 16 || file.length() != at + length) {
                throw new IOException("entry changed since it was read");
            }
            if (in.skip(at) != at) {
                throw new IOException("short skip");
            }
            byte[] t = new byte[(int) length];
            readFully(in, t, 0, t.length);
            return t;
        } catch (IOException | RuntimeException e) {
            throw new DamagedTemplate("cache entry " + file.getName() + ": " + e.getMessage());
        }
    }

    /** Fills {@code b[at, end)} from {@code in}, or throws. */
    static void readFully(java.io.InputStream in, byte[] b, int at, int end) throws IOException {
        while (at < end) {
            int r = in.read(b, at, end - at);
            if (r < 0) {
                throw new IOException("short read");
            }
            at += r;
        }
    }

    /** An entry of a bundle: its template lies at {@code templateAt} of the bundle's template region. */
    static CachedClass readFromBundle(byte[] data, int at, int limit, CacheBundle bundle, int templateAt)
            throws IOException {
        CachedClass c = new CachedClass();
        c.readHead(data, at, limit);
        c.bundle = bundle;
        c.tplAt = templateAt;
        c.fromBundle = true;
        return c;
    }

    /**
     * Reads what {@link #writeHead} wrote at {@code data[at..limit)}, keeping the class file as a
     * view into {@code data}; returns where it ends.
     */
    private int readHead(byte[] data, int at, int limit) throws IOException {
        if (limit - at < HEADER || getInt(data, at) != MAGIC) {
            throw new IOException("not a cached class");
        }
        int length = getInt(data, at + 4);
        int n = getInt(data, at + 8);
        idCount = getInt(data, at + 12);
        int attrs = getInt(data, at + 16);
        int warn = getInt(data, at + 20);
        tplParts = getInt(data, at + 24);
        tplText = getInt(data, at + 28);
        long end = (long) at + HEADER + length + 5L * n + attrs + warn;
        if (length < 0 || n < 0 || attrs < 0 || warn < 0 || tplParts < 1 || tplText < 0 || end > limit) {
            throw new IOException("damaged cached class");
        }
        int p = at + HEADER;
        bytes = data;
        bytesAt = p;
        bytesLength = length;
        p += length;
        offsets = new int[n];
        extendedWord = new boolean[n];
        for (int i = 0; i < n; i++) {
            int o = getInt(data, p);
            if (o < 0 || o > length - 4) {
                throw new IOException("damaged cached class");
            }
            offsets[i] = o;
            p += 4;
        }
        for (int i = 0; i < n; i++) {
            extendedWord[i] = data[p++] != 0;
        }
        classAttributes = new String(data, p, attrs, jbgui.output.Utf8.CHARSET);
        p += attrs;
        if (warn > 0) {
            for (String warning : new String(data, p, warn, jbgui.output.Utf8.CHARSET).split("\n")) {
                if (!warning.isEmpty()) {
                    warnings.add(warning);
                }
            }
        }
        p += warn;
        instrumented = true;
        return p;
    }
}
