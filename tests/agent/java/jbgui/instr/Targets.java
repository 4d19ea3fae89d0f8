package jbgui.instr;

/**
 * The small methods the instrumentation tests cut, measure and instrument. Each test states what
 * javac makes of its method (the bytecode in a comment beside the expectation), so a change of
 * the block analysis shows as a failing expectation, not as a different number nobody checks.
 */
public class Targets {
    int counter;
    Object last;

    /** iload_0 iload_1 iadd istore_2 iload_2 iconst_2 imul ireturn: one block. */
    static int straight(int a, int b) {
        int c = a + b;
        return c * 2;
    }

    /** 0 iload_0, 1 ifge, 2 iload_0, 3 ineg, 4 ireturn, 5 iload_0, 6 ireturn: blocks at 0, 2, 5. */
    static int abs(int x) {
        if (x < 0) {
            return -x;
        }
        return x;
    }

    /** iload_0 iload_1 idiv | istore_2 iload_2 iconst_1 iadd ireturn: precise cuts after idiv. */
    static int div(int a, int b) {
        int q = a / b;
        return q + 1;
    }

    /** try [0, 3): aload_0 iconst_0 iaload; ireturn; handler: astore_1 iconst_m1 ireturn. */
    static int guarded(int[] a) {
        try {
            return a[0];
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** aload_0 iconst_0 iaload aload_0 iconst_1 iaload iadd ireturn. */
    static int sum(int[] a) {
        return a[0] + a[1];
    }

    /** aload_0 dup getfield iconst_1 iadd putfield return: an own int field read and written. */
    void bump() {
        counter++;
    }

    /** aload_0 aload_1 putfield return: an own reference field written. */
    void remember(Object o) {
        last = o;
    }

    /** dload_0 invokestatic Math.sqrt ldc2_w 2.0 dmul dreturn. */
    static double callSqrt(double x) {
        return Math.sqrt(x) * 2.0;
    }

    /** A loop: a back edge makes the loop head a block of its own. */
    static int loop(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += i;
        }
        return s;
    }

    /** A table switch: every case is a block. */
    static String pick(int k) {
        switch (k) {
            case 0: return "zero";
            case 1: return "one";
            case 2: return "two";
            default: return "many";
        }
    }

    /** synchronized block: monitorenter and monitorexit with their handler. */
    int locked() {
        synchronized (this) {
            return counter;
        }
    }

    /** A synchronized block that begins with a loop: a jump to the block's first instruction. */
    int lockedLoop(int n) {
        synchronized (this) {
            do {
                counter++;
            } while (--n > 0);
            return counter;
        }
    }

    /** A lookup switch (sparse keys): its padding and pairs make the offsets after it uneven. */
    static int sparse(int k) {
        switch (k) {
            case 10: return 1;
            case 1000: return 2;
            case 100000: return 3;
            default: return 0;
        }
    }

    /** 300 locals: the last ones are reached with wide iload/istore/iinc. */
    static int wide(int a) {
        int v0 = a, v1 = a, v2 = a, v3 = a, v4 = a, v5 = a, v6 = a, v7 = a, v8 = a, v9 = a;
        long w0 = a, w1 = a, w2 = a, w3 = a, w4 = a, w5 = a, w6 = a, w7 = a, w8 = a, w9 = a;
        long x0 = a, x1 = a, x2 = a, x3 = a, x4 = a, x5 = a, x6 = a, x7 = a, x8 = a, x9 = a;
        long y0 = a, y1 = a, y2 = a, y3 = a, y4 = a, y5 = a, y6 = a, y7 = a, y8 = a, y9 = a;
        long z0 = a, z1 = a, z2 = a, z3 = a, z4 = a, z5 = a, z6 = a, z7 = a, z8 = a, z9 = a;
        double d0 = a, d1 = a, d2 = a, d3 = a, d4 = a, d5 = a, d6 = a, d7 = a, d8 = a, d9 = a;
        double e0 = a, e1 = a, e2 = a, e3 = a, e4 = a, e5 = a, e6 = a, e7 = a, e8 = a, e9 = a;
        double f0 = a, f1 = a, f2 = a, f3 = a, f4 = a, f5 = a, f6 = a, f7 = a, f8 = a, f9 = a;
        double g0 = a, g1 = a, g2 = a, g3 = a, g4 = a, g5 = a, g6 = a, g7 = a, g8 = a, g9 = a;
        double h0 = a, h1 = a, h2 = a, h3 = a, h4 = a, h5 = a, h6 = a, h7 = a, h8 = a, h9 = a;
        long i0 = a, i1 = a, i2 = a, i3 = a, i4 = a, i5 = a, i6 = a, i7 = a, i8 = a, i9 = a;
        long j0 = a, j1 = a, j2 = a, j3 = a, j4 = a, j5 = a, j6 = a, j7 = a, j8 = a, j9 = a;
        long k0 = a, k1 = a, k2 = a, k3 = a, k4 = a, k5 = a, k6 = a, k7 = a, k8 = a, k9 = a;
        long l0 = a, l1 = a, l2 = a, l3 = a, l4 = a, l5 = a, l6 = a, l7 = a, l8 = a, l9 = a;
        int last = a;
        last += 1000;
        return last + v9;
    }
}
