package jbgui.instr;

import jbgui.runtime.EventLayout;

/**
 * Allocates method ids (19 bits, from 1). A method owns one id per 2048 of its blocks. When the
 * space is exhausted allocation fails and the class is left uninstrumented, never mis-numbered.
 */
public final class MethodIds {
    private int next;

    /** A fresh space (the trace's, or a scratch one for warm-up). */
    public MethodIds(boolean scratch) {
        next = 1;
    }

    /** Replays an earlier allocation that started at {@code first} (a class retransformed again). */
    public MethodIds(int first) {
        next = first;
    }

    /** The first of {@code count} consecutive ids, or -1 when they do not fit. */
    public synchronized int allocate(int count) {
        if (count <= 0) {
            return next;
        }
        if ((long) next + count - 1 > EventLayout.MAX_METHOD_ID) {
            return -1;
        }
        int first = next;
        next += count;
        return first;
    }

    public synchronized int used() {
        return next - 1;
    }
}
