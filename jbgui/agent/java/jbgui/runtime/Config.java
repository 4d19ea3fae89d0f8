package jbgui.runtime;

/**
 * What the engine decided at start-up, read by the runtime. Set once by the engine before any
 * instrumented code can reach the runtime; the runtime copies these into static finals, so the
 * JIT folds the checks away.
 */
public final class Config {
    private Config() {}

    /** 2: one stream per thread (the seed's mode 2); 1: one shared, globally ordered stream. */
    public static int mode = 2;
    public static boolean recordClassLoad = true;
    public static boolean recordMethodStart = true;
    public static boolean recordMethodEnd = true;
    public static boolean recordBlocks = true;
    public static boolean recordReceiver = true;
    public static boolean recordExceptionExit = true;
    /** Exact clock samples around calls that may block (agent option {@code blocking=off} turns them off). */
    public static boolean blockingStamps = true;
    /**
     * Whether entry probes may mark a start EventLayout.START_ENTRY_IMPLIED (jbgui.instr.BlockElision
     * is on). When not (level=method, mode 1, elide=off), the writer does not look for marks.
     */
    public static boolean entryMarks = true;
    /** Whether probes may store loop records (jbgui.instr.LoopCycles); when not, the writer does not look for them. */
    public static boolean loopRecords = true;
    /**
     * How many virtual threads are traced at most over the run (agent option {@code virtual=N});
     * the later ones run untraced and trace.json says so. Each traced thread is a stream file, a
     * buffer while it lives and a row in every view, and a program may start millions.
     */
    public static int virtualThreadsMax = 1000;
    /** Clock sampler period in microseconds; 0 turns the sampler off. */
    public static int clockPeriodMicros = 0;
    /** Bytes of event buffers that may wait for the writer before recording threads block. */
    public static long maxBufferedBytes = 64L << 20;

    private static long pid = -1;

    /**
     * This JVM's process id, read from /proc/self where there is one: ProcessHandle would start
     * a thread pool and bootstrap lambdas, hundreds of JDK classes the agent would then have to
     * retransform.
     */
    public static long pid() {
        if (pid < 0) {
            try {
                pid = Long.parseLong(new java.io.File("/proc/self").getCanonicalFile().getName());
            } catch (java.io.IOException | RuntimeException e) {
                pid = ProcessHandle.current().pid();
            }
        }
        return pid;
    }
}
