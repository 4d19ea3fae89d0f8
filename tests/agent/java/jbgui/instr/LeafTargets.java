package jbgui.instr;

/** Methods that are leaves (LeafMethods: start and end recorded at once) or just miss being one. */
public class LeafTargets {
    int size;
    LeafTargets next;
    static int shared;

    /** aload_0 getfield ireturn. */
    int size() {
        return size;
    }

    /** aload_0 iload_1 putfield return. */
    void setSize(int s) {
        size = s;
    }

    /** this held in another local: still this. */
    int twice() {
        LeafTargets self = this;
        return self.size * 2;
    }

    /** Forward jumps only: a leaf at method level; at block level it has three blocks. */
    boolean isEmpty() {
        return size == 0;
    }

    /** A string constant: resolving it loads no class. */
    String name() {
        return "leaf";
    }

    /** Conversions and shifts. */
    static long widen(int a) {
        return (long) a << 3;
    }

    /** Another object's field: may throw a NullPointerException. */
    int nextSize() {
        return next.size;
    }

    /** A field of this or of another object, as the branch goes. */
    int either(LeafTargets o, boolean mine) {
        return (mine ? this : o).size;
    }

    /** getstatic: may run a class initializer. */
    static int sharedValue() {
        return shared;
    }

    /** A class constant: may load a class. */
    Class<?> type() {
        return LeafTargets.class;
    }

    /** Division: may throw an ArithmeticException. */
    static int half(int a, int b) {
        return a / b;
    }

    /** A loop: may never end. */
    static int count(int n) {
        int s = 0;
        while (n > 0) {
            s += n--;
        }
        return s;
    }

    /** A monitor around the body. */
    synchronized int lockedSize() {
        return size;
    }

    /** A call. */
    int hash() {
        return Integer.hashCode(size);
    }
}
