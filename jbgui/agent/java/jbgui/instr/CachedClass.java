package jbgui.instr;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.objectweb.asm.ClassReader;

import jbgui.output.Xml;
import jbgui.runtime.EventLayout;

/**
 * A class instrumented with method ids relative to 1, ready to be relocated to the ids one run
 * assigns. The relocation patches the event constants in the constant pool (each probe loads its
 * event word with {@code ldc}, and the class writer appends these ints after the original pool),
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

    private synchronized void ensureTemplate() {
        if (parts != null || source == null) {
            return;
        }
        String t = source.template();
        source = null;
        List<byte[]> p = new ArrayList<>();
        List<Long> v = new ArrayList<>();
        StringBuilder k = new StringBuilder();
        int i = 0;
        while (true) {
            int m = nextMark(t, i);
            p.add(t.substring(i, m < 0 ? t.length() : m).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            if (m < 0) {
                break;
            }
            int end = t.indexOf(MARK_END, m);
            k.append(t.charAt(m));
            v.add(Long.parseLong(t.substring(m + 1, end)));
            i = end + 1;
        }
        parts = p.toArray(new byte[0][]);
        kinds = new byte[v.size()];
        values = new long[v.size()];
        for (int j = 0; j < values.length; j++) {
            kinds[j] = (byte) k.charAt(j);
            values[j] = v.get(j);
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
        StringBuilder s = new StringBuilder(256);
        s.append("<class id=\"").append(plan.classId).append('"').append(classAttributes);
        s.append(" loader_id=\"").append(plan.loaderId).append("\" loader=\"").append(Xml.attr(plan.loader)).append('"');
        if (plan.module != null) {
            s.append(" module=\"").append(Xml.attr(plan.module)).append('"');
        }
        s.append(" jdk=\"").append(plan.jdk).append('"');
        if (plan.preloaded) {
            s.append(" preloaded=\"true\"");
        }
        s.append(status).append(">\n");
        out.write(s.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
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

    private static final int MAGIC = 0x4A424344; // "JBCD": version 2, pre-split template

    void write(DataOutputStream out) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(bytes.length);
        out.write(bytes);
        out.writeInt(offsets.length);
        for (int i = 0; i < offsets.length; i++) {
            out.writeInt(offsets[i]);
            out.writeBoolean(extendedWord[i]);
        }
        out.writeInt(idCount);
        out.writeBoolean(instrumented);
        out.writeInt(warnings.size());
        for (String w : warnings) {
            out.writeUTF(w);
        }
        writeLong(out, classAttributes);
        ensureTemplate();
        out.writeInt(parts.length);
        for (byte[] p : parts) {
            out.writeInt(p.length);
            out.write(p);
        }
        out.write(kinds);
        for (long v : values) {
            out.writeLong(v);
        }
    }

    static CachedClass read(DataInputStream in) throws IOException {
        if (in.readInt() != MAGIC) {
            throw new IOException("not a cached class");
        }
        CachedClass c = new CachedClass();
        c.bytes = new byte[in.readInt()];
        in.readFully(c.bytes);
        int n = in.readInt();
        c.offsets = new int[n];
        c.extendedWord = new boolean[n];
        for (int i = 0; i < n; i++) {
            c.offsets[i] = in.readInt();
            c.extendedWord[i] = in.readBoolean();
        }
        c.idCount = in.readInt();
        c.instrumented = in.readBoolean();
        int w = in.readInt();
        for (int i = 0; i < w; i++) {
            c.warnings.add(in.readUTF());
        }
        c.classAttributes = readLong(in);
        c.parts = new byte[in.readInt()][];
        for (int i = 0; i < c.parts.length; i++) {
            c.parts[i] = new byte[in.readInt()];
            in.readFully(c.parts[i]);
        }
        c.kinds = new byte[c.parts.length - 1];
        in.readFully(c.kinds);
        c.values = new long[c.kinds.length];
        for (int i = 0; i < c.values.length; i++) {
            c.values[i] = in.readLong();
        }
        return c;
    }

    /** Strings longer than writeUTF's 64 KiB: length-prefixed UTF-8. */
    private static void writeLong(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String readLong(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }
}
