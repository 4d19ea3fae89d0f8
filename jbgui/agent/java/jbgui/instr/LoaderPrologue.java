package jbgui.instr;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.FrameNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.VarInsnNode;

/**
 * Keeps the tracer out of the program's class loaders. An instrumented class names
 * {@code jbgui/runtime/Tracer} and {@code ThreadTrace} in its constant pool, and the JVM resolves
 * them by calling {@code loadClass(String)} on the class's defining loader: a program's own
 * loader would run for names the untraced program never asks for (and record those calls). So
 * every {@code loadClass(String)} — {@code java.lang.ClassLoader}'s, which all loaders inherit
 * unless they override that very method, and each override — begins with
 *
 * <pre>
 *   aload 1; invokestatic Tracer.runtimeClass(String)Class; dup; ifnull L; areturn; L: pop
 * </pre>
 *
 * before any probe: for the runtime's names the boot loader's class is returned at once and the
 * loader's own code never runs; for every other name the method runs unchanged.
 */
final class LoaderPrologue {
    private LoaderPrologue() {}

    static final String NAME = "loadClass";
    static final String DESC = "(Ljava/lang/String;)Ljava/lang/Class;";
    /** The class whose loadClass(String) is given the prologue even when it is not traced. */
    static final String CLASS_LOADER = "java/lang/ClassLoader";

    static boolean applies(MethodNode mn) {
        return NAME.equals(mn.name) && DESC.equals(mn.desc)
                && (mn.access & (Opcodes.ACC_STATIC | Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) == 0
                && mn.instructions.size() > 0;
    }

    /** Inserts the prologue at the very start of {@code mn}; call it after every other probe. */
    static void insert(MethodNode mn, String owner, boolean frames) {
        InsnList p = new InsnList();
        LabelNode go = new LabelNode();
        p.add(new VarInsnNode(Opcodes.ALOAD, 1));
        p.add(new MethodInsnNode(Opcodes.INVOKESTATIC, ProbeInserter.TRACER, "runtimeClass",
                "(Ljava/lang/String;)Ljava/lang/Class;", false));
        p.add(new InsnNode(Opcodes.DUP));
        p.add(new JumpInsnNode(Opcodes.IFNULL, go));
        p.add(new InsnNode(Opcodes.ARETURN));
        p.add(go);
        if (frames) {
            p.add(new FrameNode(Opcodes.F_NEW, 2, new Object[] {owner, "java/lang/String"}, 1,
                    new Object[] {"java/lang/Class"}));
        }
        p.add(new InsnNode(Opcodes.POP));
        mn.instructions.insert(p);
        mn.maxStack = Math.max(mn.maxStack, 2);
    }

    /**
     * The class file with only the prologue added (a class the agent does not trace, such as
     * {@code java.lang.ClassLoader} with {@code jdk=off}); null when it has no such method.
     */
    static byte[] only(byte[] original) {
        byte[] readable = AsmSupport.readable(original);
        ClassReader cr = new ClassReader(readable);
        ClassNode cn = new ClassNode();
        cr.accept(cn, ClassReader.EXPAND_FRAMES);
        cn.version = (cn.version & 0xFFFF0000) | AsmSupport.major(original);
        boolean frames = (cn.version & 0xFFFF) >= Opcodes.V1_6;
        boolean any = false;
        for (MethodNode mn : cn.methods) {
            if (applies(mn)) {
                insert(mn, cn.name, frames);
                any = true;
            }
        }
        if (!any) {
            return null;
        }
        ClassWriter cw = new ClassWriter(cr, 0);
        cn.accept(cw);
        return cw.toByteArray();
    }
}
