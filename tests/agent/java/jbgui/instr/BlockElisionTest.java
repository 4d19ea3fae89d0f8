package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;
import org.objectweb.asm.tree.VarInsnNode;

/**
 * Whose first block goes without a probe (BlockElision.entryImplied): only a first block that runs
 * exactly once per call, right after the method's start.
 */
class BlockElisionTest {

    private static boolean implied(MethodNode m) {
        return BlockElision.entryImplied(m, BlockAnalysis.analyze(m, false));
    }

    private static boolean implied(String name) {
        return implied(TestSupport.method(Targets.class, name));
    }

    @Test
    void aFirstBlockNothingJumpsToIsImplied() {
        assertTrue(implied("straight"));
        assertTrue(implied("abs"));
        // The loop's head is the second block; the first runs once.
        assertTrue(implied("loop"));
        // A try range that starts at the first instruction, with its handler after it.
        assertTrue(implied("guarded"));
    }

    @Test
    void aFirstBlockThatIsALoopHeadIsRecorded() {
        // L0: iload_0; ifne L0; return
        MethodNode m = new MethodNode(Opcodes.ACC_STATIC, "spin", "(I)V", null, null);
        LabelNode top = new LabelNode();
        m.instructions.add(top);
        m.instructions.add(new VarInsnNode(Opcodes.ILOAD, 0));
        m.instructions.add(new JumpInsnNode(Opcodes.IFNE, top));
        m.instructions.add(new InsnNode(Opcodes.RETURN));
        assertFalse(implied(m));
    }

    @Test
    void aFirstBlockCoveringItsOwnHandlerIsRecorded() {
        // try [L0, L1) catch -> L0: its event is deferred (ProbeInserter), so it keeps its probe.
        MethodNode m = new MethodNode(Opcodes.ACC_STATIC, "self", "()V", null, null);
        LabelNode start = new LabelNode();
        LabelNode end = new LabelNode();
        m.instructions.add(start);
        m.instructions.add(new InsnNode(Opcodes.NOP));
        m.instructions.add(end);
        m.instructions.add(new InsnNode(Opcodes.RETURN));
        m.tryCatchBlocks.add(new TryCatchBlockNode(start, end, start, null));
        assertFalse(implied(m));
    }

    @Test
    void aHandlerAtTheStartIsRecorded() {
        MethodNode m = new MethodNode(Opcodes.ACC_STATIC, "h", "()V", null, null);
        LabelNode handler = new LabelNode();
        LabelNode start = new LabelNode();
        LabelNode end = new LabelNode();
        m.instructions.add(handler);
        m.instructions.add(new InsnNode(Opcodes.NOP));
        m.instructions.add(start);
        m.instructions.add(new InsnNode(Opcodes.NOP));
        m.instructions.add(end);
        m.instructions.add(new InsnNode(Opcodes.RETURN));
        m.tryCatchBlocks.add(new TryCatchBlockNode(start, end, handler, null));
        assertFalse(implied(m));
    }
}
