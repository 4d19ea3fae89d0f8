package jbgui.instr;

import org.objectweb.asm.ClassReader;

/**
 * The original bytecode offset of every instruction, per method. ASM's tree API drops offsets,
 * but the static information must name them (the GUI lists bytecode by offset), so this walks the
 * class file's Code attributes directly. ASM reads one node per instruction (ldc_w, wide and
 * goto_w included), so the k-th instruction node is the k-th instruction here.
 */
final class CodeOffsets {
    private CodeOffsets() {}

    /** For each method in file order: instruction start offsets followed by the code length, or null. */
    static int[][] compute(ClassReader cr, byte[] b, int methodCount) {
        int[][] result = new int[methodCount][];
        char[] buf = new char[cr.getMaxStringLength() + 1];
        int u = cr.header + 6;
        u += 2 + 2 * cr.readUnsignedShort(u);
        int fields = cr.readUnsignedShort(u);
        u += 2;
        for (int i = 0; i < fields; i++) {
            u = skipMember(cr, u);
        }
        int methods = cr.readUnsignedShort(u);
        u += 2;
        for (int m = 0; m < methods && m < methodCount; m++) {
            int attributes = cr.readUnsignedShort(u + 6);
            int a = u + 8;
            for (int k = 0; k < attributes; k++) {
                String name = cr.readUTF8(a, buf);
                int length = cr.readInt(a + 2);
                if ("Code".equals(name)) {
                    int codeLength = cr.readInt(a + 10);
                    result[m] = offsets(b, a + 14, codeLength);
                }
                a += 6 + length;
            }
            u = a;
        }
        return result;
    }

    private static int skipMember(ClassReader cr, int u) {
        int attributes = cr.readUnsignedShort(u + 6);
        int a = u + 8;
        for (int k = 0; k < attributes; k++) {
            a += 6 + cr.readInt(a + 2);
        }
        return a;
    }

    private static int[] offsets(byte[] b, int start, int length) {
        int[] out = new int[Math.max(16, length / 2)];
        int n = 0;
        int pc = 0;
        while (pc < length) {
            if (n + 1 >= out.length) {
                out = java.util.Arrays.copyOf(out, out.length * 2);
            }
            out[n++] = pc;
            pc += size(b, start, pc);
        }
        out[n++] = length;
        return java.util.Arrays.copyOf(out, n);
    }

    private static int s32(byte[] b, int i) {
        return ((b[i] & 0xFF) << 24) | ((b[i + 1] & 0xFF) << 16) | ((b[i + 2] & 0xFF) << 8) | (b[i + 3] & 0xFF);
    }

    private static int size(byte[] b, int start, int pc) {
        int op = b[start + pc] & 0xFF;
        switch (op) {
            case 170: { // tableswitch: padding to 4, default, low, high, jump table
                int p = (pc + 4) & ~3;
                int low = s32(b, start + p + 4);
                int high = s32(b, start + p + 8);
                return p - pc + 12 + 4 * (high - low + 1);
            }
            case 171: { // lookupswitch: padding, default, npairs, pairs
                int p = (pc + 4) & ~3;
                int pairs = s32(b, start + p + 4);
                return p - pc + 8 + 8 * pairs;
            }
            case 196: // wide
                return (b[start + pc + 1] & 0xFF) == 132 ? 6 : 4;
            default:
                return SIZES[op];
        }
    }

    private static final byte[] SIZES = new byte[256];

    static {
        java.util.Arrays.fill(SIZES, (byte) 1);
        SIZES[16] = 2;
        SIZES[17] = 3;
        SIZES[18] = 2;
        SIZES[19] = 3;
        SIZES[20] = 3;
        for (int op = 21; op <= 25; op++) {
            SIZES[op] = 2;
        }
        for (int op = 54; op <= 58; op++) {
            SIZES[op] = 2;
        }
        SIZES[132] = 3;
        for (int op = 153; op <= 168; op++) {
            SIZES[op] = 3;
        }
        SIZES[169] = 2;
        for (int op = 178; op <= 184; op++) {
            SIZES[op] = 3;
        }
        SIZES[185] = 5;
        SIZES[186] = 5;
        SIZES[187] = 3;
        SIZES[188] = 2;
        SIZES[189] = 3;
        SIZES[192] = 3;
        SIZES[193] = 3;
        SIZES[197] = 4;
        SIZES[198] = 3;
        SIZES[199] = 3;
        SIZES[200] = 5;
        SIZES[201] = 5;
    }
}
