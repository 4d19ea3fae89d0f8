package jbgui.instr;

import org.objectweb.asm.Handle;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.IincInsnNode;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.IntInsnNode;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MultiANewArrayInsnNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;
import org.objectweb.asm.util.Printer;

/** One line of text per instruction, {@code offset mnemonic operands}, for the optional listing. */
final class Listing {
    private Listing() {}

    static String line(AbstractInsnNode insn, int offset, java.util.function.ToIntFunction<org.objectweb.asm.tree.LabelNode> target) {
        StringBuilder s = new StringBuilder();
        s.append(offset).append(' ').append(Printer.OPCODES[insn.getOpcode()].toLowerCase());
        if (insn instanceof VarInsnNode) {
            s.append(' ').append(((VarInsnNode) insn).var);
        } else if (insn instanceof IntInsnNode) {
            s.append(' ').append(((IntInsnNode) insn).operand);
        } else if (insn instanceof IincInsnNode) {
            s.append(' ').append(((IincInsnNode) insn).var).append(' ').append(((IincInsnNode) insn).incr);
        } else if (insn instanceof TypeInsnNode) {
            s.append(' ').append(((TypeInsnNode) insn).desc);
        } else if (insn instanceof FieldInsnNode) {
            FieldInsnNode f = (FieldInsnNode) insn;
            s.append(' ').append(f.owner).append('.').append(f.name).append(' ').append(f.desc);
        } else if (insn instanceof MethodInsnNode) {
            MethodInsnNode m = (MethodInsnNode) insn;
            s.append(' ').append(m.owner).append('.').append(m.name).append(m.desc);
        } else if (insn instanceof InvokeDynamicInsnNode) {
            InvokeDynamicInsnNode d = (InvokeDynamicInsnNode) insn;
            s.append(' ').append(d.name).append(d.desc).append(" bootstrap ").append(d.bsm.getOwner()).append('.')
                    .append(d.bsm.getName());
        } else if (insn instanceof LdcInsnNode) {
            Object c = ((LdcInsnNode) insn).cst;
            if (c instanceof String) {
                String str = (String) c;
                s.append(" \"").append(str.length() > 60 ? str.substring(0, 60) + "…" : str).append('"');
            } else if (c instanceof Type) {
                s.append(' ').append(((Type) c).getDescriptor());
            } else if (c instanceof Handle) {
                s.append(' ').append(((Handle) c).getOwner()).append('.').append(((Handle) c).getName());
            } else {
                s.append(' ').append(c);
            }
        } else if (insn instanceof JumpInsnNode) {
            s.append(' ').append(target.applyAsInt(((JumpInsnNode) insn).label));
        } else if (insn instanceof TableSwitchInsnNode) {
            TableSwitchInsnNode t = (TableSwitchInsnNode) insn;
            s.append(' ').append(t.min).append("..").append(t.max).append(" default ").append(target.applyAsInt(t.dflt));
        } else if (insn instanceof LookupSwitchInsnNode) {
            LookupSwitchInsnNode t = (LookupSwitchInsnNode) insn;
            s.append(' ').append(t.keys.size()).append(" keys default ").append(target.applyAsInt(t.dflt));
        } else if (insn instanceof MultiANewArrayInsnNode) {
            s.append(' ').append(((MultiANewArrayInsnNode) insn).desc).append(' ').append(((MultiANewArrayInsnNode) insn).dims);
        } else if (!(insn instanceof InsnNode)) {
            s.append(" ?");
        }
        return s.toString();
    }
}
