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

    private static Unsafe unsafe;
    /** Offset of {@code Thread.holder}; -1 before JDK 19, where the status is a field of Thread itself. */
    private static long holderOffset = -1;
    /** Offset of {@code Thread.tid} (JDK 17 to 25 at least). */
    private static long tidOffset;

    /** Called once by the engine before tracing starts. */
    public static void init() {
        tidOffset = Unsafe.getUnsafe().objectFieldOffset(Thread.class, "tid");
        unsafe = Unsafe.getUnsafe();
        try {
            holderOffset = unsafe.objectFieldOffset(Thread.class, "holder");
        } catch (RuntimeException | InternalError e) {
            holderOffset = -1;
        }
    }

    /**
     * The thread's id ({@code Thread.tid}, read without running traced code: {@code getId()} is
     * traced and may be overridden); 0 before {@link #init}. Small enough to inline.
     */
    static long id(Thread thread) {
        Unsafe u = unsafe;
        return u == null ? 0 : u.getLong(thread, tidOffset);
    }

    /** False while the constructor of {@code thread} has not yet given it its status holder. */
    static boolean canBlock(Thread thread) {
        long offset = holderOffset;
        return offset < 0 || unsafe.getReference(thread, offset) != null;
    }
}
