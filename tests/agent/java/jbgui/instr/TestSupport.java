package jbgui.instr;

import java.io.IOException;
import java.io.InputStream;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodNode;

/** Class bytes and methods of the test targets, as the agent sees them. */
final class TestSupport {
    private TestSupport() {}

    static byte[] bytes(Class<?> c) {
        String resource = "/" + c.getName().replace('.', '/') + ".class";
        try (InputStream in = c.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("no class file " + resource);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static ClassNode tree(byte[] b) {
        ClassNode cn = new ClassNode();
        new ClassReader(b).accept(cn, 0);
        return cn;
    }

    static MethodNode method(Class<?> c, String name) {
        for (MethodNode m : tree(bytes(c)).methods) {
            if (m.name.equals(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException("no method " + name + " in " + c.getName());
    }

    static BlockAnalysis blocks(String name, boolean precise) {
        return BlockAnalysis.analyze(method(Targets.class, name), precise);
    }

    /** The real instructions of a method (labels, lines and frames left out). */
    static AbstractInsnNode[] insns(String name) {
        return blocks(name, false).insns;
    }
}
