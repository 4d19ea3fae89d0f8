package jbgui.instr;

import java.util.ArrayList;
import java.util.List;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.commons.AnalyzerAdapter;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * The locals' types at a call, as a stack map frame lists them (a long or double one entry), for
 * the frames of a leaf's body written in place of that call (ProbeInserter, LoopCycles). ASM's
 * AnalyzerAdapter follows the method's own frames (the class is read with expanded frames) and
 * the instructions between them, so no class is loaded to merge types.
 */
final class CallSiteFrame {
    private CallSiteFrame() {}

    /**
     * The locals at {@code call} in {@code mn} (before any probe), or null when the call's operand
     * stack holds more than its arguments (the leaf's handler empties the stack, and the real call
     * it then makes must find the same stack below its result), when the frame is unknown or the
     * analysis fails.
     */
    static List<Object> locals(MethodNode mn, String owner, MethodInsnNode call) {
        try {
            AnalyzerAdapter aa = new AnalyzerAdapter(owner, mn.access, mn.name, mn.desc, null);
            for (AbstractInsnNode n = mn.instructions.getFirst(); n != null && n != call; n = n.getNext()) {
                n.accept(aa);
            }
            if (aa.locals == null || aa.stack == null) {
                return null;
            }
            int args = 0;
            for (Type t : Type.getArgumentTypes(call.desc)) {
                args += t.getSize();
            }
            if (aa.stack.size() != args) {
                return null;
            }
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < aa.locals.size(); i++) {
                Object o = aa.locals.get(i);
                if (o instanceof org.objectweb.asm.Label) {
                    return null;   // an uninitialized object in a local: no frame of ours names it
                }
                out.add(o);
                if (o == Opcodes.LONG || o == Opcodes.DOUBLE) {
                    i++;   // AnalyzerAdapter gives their second slot as TOP; a frame does not
                }
            }
            return out;
        } catch (RuntimeException e) {
            return null;
        }
    }
}
