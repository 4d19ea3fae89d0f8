package jbgui.output;

/**
 * A StringBuilder for the text the tracer's own threads write in bulk (the {@code <method>}
 * elements of static.xml, jbgui.instr.MethodElements), with the appends done in the tracer's own
 * code. The JDK's classes are instrumented, and on a thread that records nothing each call into
 * them still passes its probes to find that out: StringBuilder.append of a String makes some eight
 * such calls, of an int six, where here a String costs two (length, getChars) and a number none.
 * The writer describes every class a run with a cold class cache instruments, and its probes were
 * most of its samples there.
 */
public final class Text {
    private char[] chars;
    private int length;

    public Text(int capacity) {
        chars = new char[Math.max(16, capacity)];
    }

    private void room(int more) {
        int need = length + more;
        if (need > chars.length) {
            char[] grown = new char[Math.max(need, 2 * chars.length)];
            System.arraycopy(chars, 0, grown, 0, length);
            chars = grown;
        }
    }

    public Text append(String s) {
        int n = s.length();
        room(n);
        s.getChars(0, n, chars, length);
        length += n;
        return this;
    }

    public Text append(char c) {
        room(1);
        chars[length++] = c;
        return this;
    }

    public Text append(boolean b) {
        return append(b ? "true" : "false");
    }

    public Text append(int v) {
        return append((long) v);
    }

    public Text append(long v) {
        if (v == Long.MIN_VALUE) {
            return append("-9223372036854775808");
        }
        room(20);
        if (v < 0) {
            chars[length++] = '-';
            v = -v;
        }
        int digits = 1;
        for (long t = v; t >= 10; t /= 10) {
            digits++;
        }
        for (int i = length + digits - 1; i >= length; i--) {
            chars[i] = (char) ('0' + (int) (v % 10));
            v /= 10;
        }
        length += digits;
        return this;
    }

    public int length() {
        return length;
    }

    @Override
    public String toString() {
        return new String(chars, 0, length);
    }
}
