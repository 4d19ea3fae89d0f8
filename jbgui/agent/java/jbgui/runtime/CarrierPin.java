package jbgui.runtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Keeps a virtual thread on its carrier while it hands a buffer to the writer
 * ({@code jdk.internal.vm.Continuation.pin} and {@code unpin}, JDK 21+).
 *
 * <p>Since JDK 24 (JEP 491) a virtual thread that waits on a monitor, or finds one taken, leaves
 * its carrier and needs a free carrier to go on. The hand-off holds the thread's
 * {@link ThreadTrace} lock and may wait for the writer (back-pressure) or for a monitor the writer
 * holds; a virtual thread unmounted there, while virtual threads that never block kept every
 * carrier busy, would never run again, and the final flush, which takes the same lock, hung the
 * JVM's exit (four virtual threads that never block, on two carriers: 10 exits of 10 hung,
 * tests/programs/virtual_threads {@code spin}).
 * Pinned, the thread waits on its carrier, as a platform thread waits.
 */
public final class CarrierPin {
    private CarrierPin() {}

    private static volatile MethodHandle pin;
    private static volatile MethodHandle unpin;

    /**
     * Looks the two methods up, where the JDK has them; called once by the engine after it has
     * exported {@code jdk.internal.vm} to the runtime, before tracing starts.
     */
    public static void init() throws ReflectiveOperationException {
        Class<?> continuation = Class.forName("jdk.internal.vm.Continuation", false, null);
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        MethodType none = MethodType.methodType(void.class);
        unpin = lookup.findStatic(continuation, "unpin", none);
        pin = lookup.findStatic(continuation, "pin", none);
    }

    /** Whether {@link #init} found the methods. */
    public static boolean available() {
        return pin != null;
    }

    /** Pins the current virtual thread to its carrier; true when it did (then {@link #release} must follow). */
    static boolean hold() {
        MethodHandle p = pin;
        if (p == null) {
            return false;
        }
        try {
            p.invokeExact();
            return true;
        } catch (Throwable e) {
            return false;
        }
    }

    static void release() {
        try {
            unpin.invokeExact();
        } catch (Throwable e) {
            // Nothing to undo: pin and unpin only count.
        }
    }
}
