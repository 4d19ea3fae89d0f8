package jbgui.instr;

import java.util.Set;

import org.objectweb.asm.tree.MethodInsnNode;

/**
 * The calls around which a thread stamps the clock (Tracer.blockingEnter/blockingExit): the JDK
 * methods in which a thread waits — sleeping, waiting on a monitor, parking, waiting for a
 * process, blocking file and socket I/O. They are the natives at the bottom of the JDK's blocking
 * methods, so that the stamps sit inside the instrumented JDK method that blocks (JDK 17's
 * {@code Thread.sleep} is itself native: its stamps then sit at the program's call site). A call
 * matched here that does not block costs two clock reads and two small records in clock.bin.
 * static.xml marks these call sites {@code blocking="true"} (MethodElements), and each block's
 * {@code monitorenter}: natives beside one record no event either, so they sit at the wait's
 * event, and the explorer must know which call waited (jbgui/model/replay.py, beside_waits).
 *
 * <p>Contended {@code synchronized} blocks are stamped apart (ProbeInserter: the clock is read
 * around every {@code monitorenter}, and stamped only when it waited). Not covered:
 * {@code synchronized} methods, whose monitor the JVM takes inside the call; such waits stay
 * interpolated.
 */
final class BlockingCalls {
    private BlockingCalls() {}

    /** owner.name of blocking methods, whatever the descriptor. */
    private static final Set<String> QUALIFIED = Set.of(
            "java/lang/Thread.sleep", "java/lang/Thread.sleep0", "java/lang/Thread.sleepNanos0",
            "java/lang/Object.wait0",
            "jdk/internal/misc/Unsafe.park",
            "java/lang/ProcessImpl.waitForProcessExit0", "java/lang/ProcessHandleImpl.waitForProcessExit0",
            "java/lang/ref/Reference.waitForReferencePendingList",
            "java/io/FileInputStream.read0", "java/io/FileInputStream.readBytes",
            "java/io/FileOutputStream.write", "java/io/FileOutputStream.writeBytes",
            "java/io/RandomAccessFile.read0", "java/io/RandomAccessFile.readBytes",
            "sun/nio/ch/EPoll.wait", "sun/nio/ch/Net.poll", "sun/nio/ch/Net.accept", "sun/nio/ch/Net.connect0",
            "sun/nio/ch/ServerSocketChannelImpl.accept0", "sun/nio/ch/UnixAsynchronousSocketChannelImpl.checkConnect");

    /** Names of blocking natives of the NIO dispatchers (sun/nio/ch/*Dispatcher*). */
    private static final Set<String> DISPATCHER = Set.of(
            "read0", "readv0", "pread0", "write0", "writev0", "pwrite0");

    static boolean isBlocking(MethodInsnNode call) {
        // Object.wait(long) is final in Object and native up to JDK 20; javac names the static
        // type of the receiver as owner, so match it by name and descriptor alone.
        if (call.name.equals("wait") && call.desc.equals("(J)V")) {
            return true;
        }
        if (QUALIFIED.contains(call.owner + "." + call.name)) {
            return true;
        }
        return call.owner.startsWith("sun/nio/ch/") && call.owner.contains("Dispatcher") && DISPATCHER.contains(call.name);
    }
}
