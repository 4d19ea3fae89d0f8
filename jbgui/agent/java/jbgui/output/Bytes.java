package jbgui.output;

/** Little-endian stores into byte arrays: the trace format is little-endian throughout. */
final class Bytes {
    private Bytes() {}

    static void putShort(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
    }

    static void putInt(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
        b[off + 2] = (byte) (v >>> 16);
        b[off + 3] = (byte) (v >>> 24);
    }

    static void putLong(byte[] b, int off, long v) {
        putInt(b, off, (int) v);
        putInt(b, off + 4, (int) (v >>> 32));
    }

    static void ascii(byte[] b, int off, String s) {
        for (int i = 0; i < s.length(); i++) {
            b[off + i] = (byte) s.charAt(i);
        }
    }
}
