package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.MethodInsnNode;

class BlockingCallsTest {
    private static boolean blocking(int op, String owner, String name, String desc) {
        return BlockingCalls.isBlocking(new MethodInsnNode(op, owner, name, desc, false));
    }

    @Test
    void sleepsWaitsAndParksBlock() {
        assertTrue(blocking(Opcodes.INVOKESTATIC, "java/lang/Thread", "sleep", "(J)V"));
        assertTrue(blocking(Opcodes.INVOKEVIRTUAL, "java/util/ArrayList", "wait", "(J)V"), "wait(long) on any owner");
        assertTrue(blocking(Opcodes.INVOKEVIRTUAL, "jdk/internal/misc/Unsafe", "park", "(ZJ)V"));
        assertTrue(blocking(Opcodes.INVOKESTATIC, "sun/nio/ch/FileDispatcherImpl", "read0",
                "(Ljava/io/FileDescriptor;JI)I"));
    }

    @Test
    void ordinaryCallsDoNot() {
        assertFalse(blocking(Opcodes.INVOKESTATIC, "java/lang/Math", "abs", "(I)I"));
        assertFalse(blocking(Opcodes.INVOKEVIRTUAL, "java/lang/Object", "wait", "(JI)V"), "only wait(long) is stamped");
        assertFalse(blocking(Opcodes.INVOKESTATIC, "sun/nio/ch/FileDispatcherImpl", "size0",
                "(Ljava/io/FileDescriptor;)J"));
        assertFalse(blocking(Opcodes.INVOKESTATIC, "my/app/Thread", "sleep", "(J)V"), "a class of the same simple name");
    }
}
