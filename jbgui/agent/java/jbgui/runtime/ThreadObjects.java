package jbgui.runtime;

import jdk.internal.misc.Unsafe;

/**
 * Whether a {@link Thread} object has been constructed far enough for its thread to block.
 *
 * <p>A thread the JVM attaches itself ({@code DestroyJavaVM} at exit, any thread a native library
 * attaches through JNI) runs the {@code Thread} constructor on that very thread. Since JDK 19 the
 * thread's status lives in a holder object the constructor creates part-way; until then, a
 * contended monitor or a park makes the VM write the status through a null holder and the JVM
 * dies with SIGSEGV in {@code java_lang_Thread::set_thread_status}. Registering such a thread
 * takes a lock and queues its record for the writer, so the registry waits until the holder is
 * there.
 *
 * <p>The field is read with {@code jdk.internal.misc.Unsafe.getReference}, a native method the
 * agent never instruments, so the check itself runs no traced code. This is the one source file
 * compiled with {@code --add-exports java.base/jdk.internal.misc} (see {@code jbgui.agent.build});
 * the engine exports the package to the runtime before {@link #init} runs.
 */
public final class ThreadObjects {
    private ThreadObjects() {}

    // Constants, so that the JIT reads Thread.tid as the field it is (a known offset) and stores
    // into a buffer without a range check. Set when the class is initialized: by init(), after
    // the engine has exported jdk.internal.misc to the runtime.
    private static final Unsafe U = Unsafe.getUnsafe();
    /** Offset of {@code Thread.tid} (JDK 17 to 25 at least). */
    private static final long TID = U.objectFieldOffset(Thread.class, "tid");
    /** Offset of {@code Thread.holder}; -1 before JDK 19, where the status is a field of Thread itself. */
    private static final long HOLDER = holderOffset();
    private static final long INT_BASE = intArrayBase();
    private static final int INT_SHIFT = 2;

    private static long holderOffset() {
        try {
            return U.objectFieldOffset(Thread.class, "holder");
        } catch (RuntimeException | InternalError e) {
            return -1;
        }
    }

    /** Unsafe.arrayBaseOffset(int[].class), which returns an int up to JDK 22 and a long since. */
    private static long intArrayBase() {
        try {
            Object base = Unsafe.class.getMethod("arrayBaseOffset", Class.class).invoke(U, int[].class);
            return ((Number) base).longValue();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Unsafe.arrayBaseOffset: " + e, e);
        }
    }

    /** Called once by the engine before tracing starts: initializes the class. */
    public static void init() {
        if (TID < 0) {
            throw new IllegalStateException("Thread.tid not found");
        }
    }

    /**
     * The thread's id ({@code Thread.tid}, read without running traced code: {@code getId()} is
     * traced and may be overridden). Small enough to inline.
     */
    static long id(Thread thread) {
        return U.getLong(thread, TID);
    }

    /**
     * {@code buffer[index & (buffer.length - 1)] = value} without the range check the JIT keeps for
     * that expression (it cannot tell that the masked index is in bounds): a branch to a trap, with
     * the frame's state, in every compiled block probe. The buffer's length is a power of two.
     */
    static void store(int[] buffer, int index, int value) {
        U.putInt(buffer, INT_BASE + ((long) (index & (buffer.length - 1)) << INT_SHIFT), value);
    }

    /**
     * java.lang.BaseVirtualThread, the class of every virtual thread (JDK 21 to 25 at least:
     * Thread.isVirtual() is that very test); null on JDK 17, which has none. Looked up rather than
     * calling isVirtual by reflection, which would load the types of all of Thread's public
     * methods before the agent instruments the loaded classes (jbgui.output.Utf8 says what that costs).
     */
    private static final Class<?> VIRTUAL_BASE = virtualBase();

    private static Class<?> virtualBase() {
        try {
            return Class.forName("java.lang.BaseVirtualThread", false, null);
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /** Whether the JDK has virtual threads but not the class they are told apart by (then none is seen as one). */
    public static boolean virtualThreadsUnrecognised() {
        return VIRTUAL_BASE == null && Runtime.version().feature() >= 21;
    }

    /** Thread.isVirtual(), without running traced code. */
    public static boolean isVirtual(Thread thread) {
        return VIRTUAL_BASE != null && VIRTUAL_BASE.isInstance(thread);
    }

    /** False while the constructor of {@code thread} has not yet given it its status holder. */
    static boolean canBlock(Thread thread) {
        return HOLDER < 0 || U.getReference(thread, HOLDER) != null;
    }
}
