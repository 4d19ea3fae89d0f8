package jbgui.agent;

/**
 * Never run: its class file is what the warm-up instruments (Transformer.warmUp), so that ASM and
 * the engine are loaded before the program starts. Small, so that the warm-up (interpreted, on
 * the start-up's critical path) is short, yet with the constructs the instrumenter treats apart:
 * a constructor whose block starts between NEW and its call, branches, both switches, loops, a
 * handler, a monitor, calls of every kind, arrays of one and two dimensions, wide values, an
 * inner class. It loads the classes instrumenting Transformer.class (the warm-up before) loaded,
 * and a few more.
 */
@SuppressWarnings("unused")
final class WarmUpTarget extends java.io.Writer implements Runnable {
    private static final long[] TABLE = new long[4];
    private int count;
    private double total;

    WarmUpTarget(int n) {
        super(n > 0 ? new Object() : new StringBuilder());
        count = n;
    }

    @Override
    public void run() {
        synchronized (this) {
            count++;
        }
    }

    static int pick(int k, String s) {
        switch (k) {
            case 0: return 1;
            case 1: return 2;
            case 2: return 3;
            default: break;
        }
        switch (s.length()) {
            case 10: return 4;
            case 1000: return 5;
            default: return k > 3 ? (int) TABLE[k & 3] : -1;
        }
    }

    double sum(int[][] grid, Object o) throws java.io.IOException {
        int[][] copy = new int[grid.length][2];
        for (int[] row : grid) {
            for (int v : row) {
                total += v * 1.5;
            }
        }
        try {
            if (o instanceof CharSequence) {
                write(((CharSequence) o).toString());
            }
            Runnable r = this;
            r.run();
        } catch (RuntimeException e) {
            throw new java.io.IOException(e);
        } finally {
            count--;
        }
        return total + copy.length + Math.max(1L, TABLE[0]);
    }

    @Override
    public void write(char[] b, int off, int len) {
        total += len;
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
    }

    native void nothing();

    /** An inner class: the InnerClasses attribute. */
    private static final class Item {
        final WarmUpTarget owner = null;
    }
}
