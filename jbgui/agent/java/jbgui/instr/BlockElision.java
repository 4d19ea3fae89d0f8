package jbgui.instr;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;

/**
 * Blocks whose event the program's thread need not store because the trace already says they ran.
 *
 * <p>The one kind so far is a method's first block when nothing jumps back to it: it runs right
 * after the method's start, so its event is implied by the start's. Such a method's entry probe
 * passes its start word with {@link jbgui.runtime.EventLayout#START_ENTRY_IMPLIED} set and its
 * first block gets no probe; the trace writer, which sees every event of the thread in order, writes
 * the block's word after the start (and after the receiver word, where there is one) and clears the
 * flag (jbgui.output.EntryBlocks). Readers see the same words as with a probe in the first block:
 * the trace format does not change. Measured on javac and the compute kernel: docs/recorder-cost.md.
 *
 * <p>Not elided: a first block that is a jump target (a loop at the very start of the method), a
 * handler, in a try range that covers its own handler (its event is deferred, see ProbeInserter), or
 * code with jsr/ret.
 */
final class BlockElision {
    private BlockElision() {}

    /** Whether the method's first block runs exactly once per call, right after its start. */
    static boolean entryImplied(MethodNode mn, BlockAnalysis ba) {
        if (ba.blockCount() == 0) {
            return false;
        }
        for (AbstractInsnNode insn : ba.insns) {
            int op = insn.getOpcode();
            if (op == Opcodes.JSR || op == Opcodes.RET) {
                return false;
            }
            for (LabelNode target : BlockAnalysis.branchTargets(insn)) {
                if (ba.labelIndex.get(target) == 0) {
                    return false;
                }
            }
        }
        for (TryCatchBlockNode tc : mn.tryCatchBlocks) {
            if (ba.labelIndex.get(tc.handler) == 0) {
                return false;
            }
        }
        // In a range covering its own handler, the block's event is deferred (ProbeInserter).
        return !ProbeInserter.selfCovered(mn, ba)[0];
    }
}
