package jbgui.instr;

import java.io.DataOutputStream;
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

    /** Instrumented class file with relative ids. */
    byte[] bytes;
    /** Offsets in {@link #bytes} of the 4-byte event constants, and whether each is an extended word. */
    int[] offsets;
    boolean[] extendedWord;
    /** Method ids the class needs. */
    int idCount;
    boolean instrumented;
    List<String> warnings = new ArrayList<>();
    /** Attributes of {@code <class>} that depend only on the class file. */
    String classAttributes;
    /**
     * The XML body (methods) split at its ids: {@code parts[i]}, then id {@code i}, then
     * {@code parts[i + 1]} … Ids are method ids ({@link #MARK_METHOD}) or block ids
     * ({@link #MARK_BLOCK}), relative to method id 1. Null until produced.
     */
    byte[][] parts;
    byte[] kinds;
    long[] values;
    /** Produces the template on first use (the writer thread), when it is not loaded from disk. */
    TemplateSource source;

    interface TemplateSource {
        /** The body with each id written as MARK, digits, MARK_END. */
        String template();
    }

    /**
     * A cache entry's bytes, whose template part (from {@link #templateAt}) is parsed on first use:
     * {@link #read} runs on the program's thread during start-up, {@link #writeTo} on the writer's.
     */
    private byte[] raw;
    private int templateAt;
    private int templateParts;
    private int templateText;

    private synchronized void ensureTemplate() {
        if (parts == null && raw != null) {
            parseTemplate(java.nio.ByteBuffer.wrap(raw).position(templateAt));
            raw = null;
            return;
        }
        if (parts != null || source == null) {
            return;
        }
        String t = source.template();
        source = null;
        // No boxing here: Long.valueOf may load Long$LongCache, whose transformation would come
        // back to this code on the same thread (ClassCircularityError on JDK 25).
        List<byte[]> p = new ArrayList<>();
        long[] v = new long[16];
        StringBuilder k = new StringBuilder();
        int count = 0;
        int i = 0;
        while (true) {
            int m = nextMark(t, i);
            p.add(t.substring(i, m < 0 ? t.length() : m).getBytes(java.nio.charset.StandardCharsets.UTF_8));
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
        parts = p.toArray(new byte[0][]);
        kinds = new byte[count];
        values = java.util.Arrays.copyOf(v, count);
        for (int j = 0; j < count; j++) {
            kinds[j] = (byte) k.charAt(j);
        }
    }

    private static int nextMark(String t, int from) {
        int a = t.indexOf(MARK_METHOD, from);
        int b = t.indexOf(MARK_BLOCK, from);
        return a < 0 ? b : b < 0 ? a : Math.min(a, b);
    }

    /** The class file with ids starting at {@code base}. */
    byte[] relocate(int base) {
        byte[] out = bytes.clone();
        int delta = base - 1;
        for (int i = 0; i < offsets.length; i++) {
            int p = offsets[i];
            int word = ((out[p] & 0xFF) << 24) | ((out[p + 1] & 0xFF) << 16) | ((out[p + 2] & 0xFF) << 8) | (out[p + 3] & 0xFF);
            word += extendedWord[i] ? delta : delta << EventLayout.METHOD_SHIFT;
            out[p] = (byte) (word >>> 24);
            out[p + 1] = (byte) (word >>> 16);
            out[p + 2] = (byte) (word >>> 8);
            out[p + 3] = (byte) word;
        }
        return out;
    }

    /** Writes the {@code <class>} element for static.xml, with ids starting at {@code base}. */
    void writeTo(java.io.OutputStream out, ClassPlan plan, int base, String status) throws java.io.IOException {
        ensureTemplate();
        out.write(plan.openTag(classAttributes, status).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        long delta = base - 1;
        byte[] digits = new byte[20];
        for (int i = 0; i < values.length; i++) {
            out.write(parts[i]);
            long v = values[i] + (kinds[i] == MARK_METHOD ? delta : delta << EventLayout.METHOD_SHIFT);
            int n = 20;
            do {
                digits[--n] = (byte) ('0' + (v % 10));
                v /= 10;
            } while (v > 0);
            out.write(digits, n, 20 - n);
        }
        out.write(parts[parts.length - 1]);
        out.write(CLASS_END);
    }

    private static final byte[] CLASS_END = "</class>\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);

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

    /**
     * One entry: a fixed header, then every array as one block of bytes, so that reading it back
     * is a handful of bulk copies (start-up reads a thousand of these, mostly in interpreted code).
     */
    void write(DataOutputStream out) throws IOException {
        ensureTemplate();
        byte[] attrs = classAttributes.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        StringBuilder w = new StringBuilder();
        for (String warning : warnings) {
            w.append(warning).append('\n');
        }
        byte[] warn = w.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int textLength = 0;
        for (byte[] p : parts) {
            textLength += p.length;
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(64 + bytes.length + 5 * offsets.length + attrs.length
                + warn.length + textLength + 4 * parts.length + 9 * values.length);
        b.putInt(MAGIC).putInt(bytes.length).putInt(offsets.length).putInt(idCount).putInt(attrs.length)
                .putInt(warn.length).putInt(parts.length).putInt(textLength);
        b.put(bytes);
        for (int o : offsets) {
            b.putInt(o);
        }
        for (boolean e : extendedWord) {
            b.put((byte) (e ? 1 : 0));
        }
        b.put(attrs).put(warn);
        for (byte[] p : parts) {
            b.putInt(p.length);
        }
        for (byte[] p : parts) {
            b.put(p);
        }
        b.put(kinds);
        for (long v : values) {
            b.putLong(v);
        }
        out.write(b.array(), 0, b.position());
    }

    static CachedClass read(byte[] data) throws IOException {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(data);
        if (b.getInt() != MAGIC) {
            throw new IOException("not a cached class");
        }
        CachedClass c = new CachedClass();
        c.bytes = new byte[b.getInt()];
        int n = b.getInt();
        c.idCount = b.getInt();
        byte[] attrs = new byte[b.getInt()];
        byte[] warn = new byte[b.getInt()];
        int partCount = b.getInt();
        int textLength = b.getInt();
        b.get(c.bytes);
        c.offsets = new int[n];
        b.asIntBuffer().get(c.offsets);
        b.position(b.position() + 4 * n);
        c.extendedWord = new boolean[n];
        for (int i = 0; i < n; i++) {
            c.extendedWord[i] = b.get() != 0;
        }
        b.get(attrs).get(warn);
        c.classAttributes = new String(attrs, java.nio.charset.StandardCharsets.UTF_8);
        for (String warning : new String(warn, java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
            if (!warning.isEmpty()) {
                c.warnings.add(warning);
            }
        }
        // The template (tens of thousands of small parts for a big class, most of the entry) is
        // parsed later, by the writer: at start-up this runs for every class loaded before the agent.
        int need = 4 * partCount + textLength + Math.max(0, partCount - 1) * 9;
        if (partCount < 1 || textLength < 0 || b.remaining() != need) {
            throw new IOException("damaged cached class");
        }
        c.raw = data;
        c.templateAt = b.position();
        c.templateParts = partCount;
        c.templateText = textLength;
        c.instrumented = true;
        return c;
    }

    /** Reads the template written by {@link #write}: part lengths, text, kinds, values. */
    private void parseTemplate(java.nio.ByteBuffer b) {
        int[] lengths = new int[templateParts];
        b.asIntBuffer().get(lengths);
        b.position(b.position() + 4 * lengths.length);
        byte[] text = new byte[templateText];
        b.get(text);
        byte[][] p = new byte[lengths.length][];
        int at = 0;
        for (int i = 0; i < lengths.length; i++) {
            p[i] = java.util.Arrays.copyOfRange(text, at, at + lengths[i]);
            at += lengths[i];
        }
        byte[] k = new byte[lengths.length - 1];
        b.get(k);
        long[] v = new long[k.length];
        b.asLongBuffer().get(v);
        kinds = k;
        values = v;
        parts = p;
    }

}
