package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;
import org.objectweb.asm.util.CheckClassAdapter;

/** Instrumenting a class: verifiable code, probes into the runtime, ids allocated in order. */
class ClassInstrumenterTest {
    private static ClassPlan plan(ClassPlan.Mode mode) {
        return new ClassPlan(7, "jbgui/instr/Targets", 0, "app", null, false, false, false, mode, null);
    }

    private static InstrumentResult instrument(InstrumentOptions options, MethodIds ids) {
        return new ClassInstrumenter(options).instrument(TestSupport.bytes(Targets.class), plan(ClassPlan.Mode.TRACE), ids);
    }

    private static int runtimeCalls(MethodNode m) {
        int n = 0;
        for (AbstractInsnNode i = m.instructions.getFirst(); i != null; i = i.getNext()) {
            if (i instanceof MethodInsnNode && ((MethodInsnNode) i).owner.startsWith("jbgui/runtime/")) {
                n++;
            }
        }
        return n;
    }

    private static MethodNode method(ClassNode cn, String name) {
        return cn.methods.stream().filter(m -> m.name.equals(name)).findFirst().orElseThrow();
    }

    @Test
    void theInstrumentedClassVerifies() {
        InstrumentResult r = instrument(InstrumentOptions.builder().build(), new MethodIds(true));
        assertTrue(r.instrumented);
        assertNotNull(r.bytes);
        StringWriter problems = new StringWriter();
        CheckClassAdapter.verify(new ClassReader(r.bytes), ClassInstrumenterTest.class.getClassLoader(), false,
                new PrintWriter(problems));
        assertEquals("", problems.toString());
    }

    @Test
    void blockLevelProbesEveryBlockMethodLevelOnlyEntriesAndExits() {
        ClassNode blocks = TestSupport.tree(instrument(InstrumentOptions.builder().build(), new MethodIds(true)).bytes);
        ClassNode methods = TestSupport.tree(instrument(InstrumentOptions.builder().blockLevel(false).blockEvents(false)
                .build(), new MethodIds(true)).bytes);
        // straight: one block; abs: three blocks, two returns; sum reads an array, which may throw
        int straightBlocks = runtimeCalls(method(blocks, "straight"));
        int absBlocks = runtimeCalls(method(blocks, "abs"));
        int absMethod = runtimeCalls(method(methods, "abs"));
        assertTrue(absBlocks > straightBlocks, absBlocks + " probes in abs, " + straightBlocks + " in straight");
        assertEquals(1, absMethod, "at method level abs is a leaf (LeafMethods): one probe for its start and end");
        assertTrue(absBlocks - absMethod >= 3, "at least a probe per block more at block level: " + absBlocks
                + " against " + absMethod);
        int sumMethod = runtimeCalls(method(methods, "sum"));
        assertTrue(sumMethod >= 2, "an entry and an exit at least where the method may throw: " + sumMethod);
    }

    @Test
    void methodIdsAreAllocatedOncePerMethodFromTheFirstFreeOne() {
        MethodIds ids = new MethodIds(100);
        InstrumentResult r = instrument(InstrumentOptions.builder().build(), ids);
        int methods = TestSupport.tree(TestSupport.bytes(Targets.class)).methods.size();
        assertEquals(100, r.firstMethodId);
        assertEquals(100 + methods, ids.allocate(0), "the next free id follows this class's");
    }

    /** CONSTANT_Integer entries in a class file's pool. */
    private static int poolInts(byte[] classFile) {
        ClassReader cr = new ClassReader(classFile);
        int n = 0;
        for (int i = 1; i < cr.getItemCount(); i++) {
            int offset = cr.getItem(i);
            if (offset > 0 && classFile[offset - 1] == 3) {
                n++;
            }
        }
        return n;
    }

    @Test
    void aClassAddsOneConstantToThePoolWhateverItsMethodsAndBlocks() {
        // Retransforming a class makes HotSpot search the old pool for every entry appended to it;
        // a constant per block, then one per method, made start-up spend much of its time there.
        // Each method computes its start word from the class's one constant.
        byte[] original = TestSupport.bytes(Targets.class);
        InstrumentResult r = instrument(InstrumentOptions.builder().build(), new MethodIds(true));
        ClassNode cn = TestSupport.tree(original);
        int methods = 0;
        for (MethodNode m : cn.methods) {
            if (m.instructions.size() > 0) {
                methods++;
            }
        }
        int probes = 0;
        for (MethodNode m : TestSupport.tree(r.bytes).methods) {
            probes += runtimeCalls(m);
        }
        assertTrue(methods > 3, methods + " methods");
        assertTrue(probes > 3 * methods, probes + " probes in " + methods + " methods");
        assertEquals(1, poolInts(r.bytes) - poolInts(original), "one start word for the whole class");
    }

    /**
     * The start word a method's entry computes: the instructions before the first store into a
     * local, evaluated (ldc, pushes, ishl, ior, iadd: what ProbeInserter writes there).
     */
    private static int entryStartWord(MethodNode m) {
        java.util.ArrayDeque<Integer> stack = new java.util.ArrayDeque<>();
        for (AbstractInsnNode i = m.instructions.getFirst(); i != null; i = i.getNext()) {
            int op = i.getOpcode();
            if (op < 0) {
                continue;
            }
            if (op == org.objectweb.asm.Opcodes.ISTORE) {
                return stack.pop();
            } else if (op == org.objectweb.asm.Opcodes.LDC) {
                stack.push((Integer) ((org.objectweb.asm.tree.LdcInsnNode) i).cst);
            } else if (op >= org.objectweb.asm.Opcodes.ICONST_0 && op <= org.objectweb.asm.Opcodes.ICONST_5) {
                stack.push(op - org.objectweb.asm.Opcodes.ICONST_0);
            } else if (op == org.objectweb.asm.Opcodes.BIPUSH || op == org.objectweb.asm.Opcodes.SIPUSH) {
                stack.push(((org.objectweb.asm.tree.IntInsnNode) i).operand);
            } else {
                int b = stack.pop();
                int a = stack.pop();
                switch (op) {
                    case org.objectweb.asm.Opcodes.ISHL: stack.push(a << b); break;
                    case org.objectweb.asm.Opcodes.IOR: stack.push(a | b); break;
                    case org.objectweb.asm.Opcodes.IADD: stack.push(a + b); break;
                    default: throw new AssertionError("unexpected opcode " + op + " in " + m.name + "'s entry");
                }
            }
        }
        throw new AssertionError(m.name + " stores no start word");
    }

    @Test
    void eachMethodComputesItsOwnStartWordEvenBeyond32767Methods() {
        // A class with more methods than sipush reaches: K (the method's place) must still be
        // computed without a pool constant, which relocation would take for an event word.
        org.objectweb.asm.ClassWriter cw = new org.objectweb.asm.ClassWriter(0);
        cw.visit(org.objectweb.asm.Opcodes.V11, org.objectweb.asm.Opcodes.ACC_PUBLIC, "jbgui/instr/Many", null,
                "java/lang/Object", null);
        int count = 33_000;
        for (int i = 0; i < count; i++) {
            org.objectweb.asm.MethodVisitor mv = cw.visitMethod(org.objectweb.asm.Opcodes.ACC_STATIC, "m" + i, "()V",
                    null, null);
            mv.visitCode();
            mv.visitInsn(org.objectweb.asm.Opcodes.RETURN);
            mv.visitMaxs(0, 0);
            mv.visitEnd();
        }
        cw.visitEnd();
        byte[] original = cw.toByteArray();
        ClassPlan plan = new ClassPlan(9, "jbgui/instr/Many", 0, "app", null, false, false, false, ClassPlan.Mode.TRACE, null);
        InstrumentResult r = new ClassInstrumenter(InstrumentOptions.builder().build()).instrument(original, plan,
                new MethodIds(40));
        assertTrue(r.instrumented);
        assertEquals(40, r.firstMethodId);
        assertEquals(1, poolInts(r.bytes) - poolInts(original), "one start word for the whole class");
        ClassNode cn = TestSupport.tree(r.bytes);
        assertEquals(count, cn.methods.size());
        for (int i = 0; i < count; i++) {
            MethodNode m = cn.methods.get(i);
            assertEquals("m" + i, m.name);
            assertEquals(jbgui.runtime.EventLayout.methodStart(40 + i), entryStartWord(m), m.name);
        }
    }

    @Test
    void theMethodsOfASmallClassComputeConsecutiveStartWords() {
        InstrumentResult r = instrument(InstrumentOptions.builder().build(), new MethodIds(100));
        ClassNode cn = TestSupport.tree(r.bytes);
        int k = 0;
        for (MethodNode m : cn.methods) {
            if (m.instructions.size() > 0) {
                assertEquals(jbgui.runtime.EventLayout.methodStart(100 + k), entryStartWord(m), m.name);
            }
            k++;
        }
    }

    /**
     * The stamp after a monitorenter lies inside the synchronized block's own catch-any range, whose
     * handler releases the monitor (not only the probes' exception exit, which does not: HotSpot's
     * compilers refuse such a method), and no jump lands between the monitorenter and the stamp
     * (the stamp runs once per monitorenter, not per turn of a loop).
     */
    @Test
    void theStampAfterAMonitorenterIsInsideItsBlocksHandlerAndOffItsLoops() {
        ClassNode cn = TestSupport.tree(instrument(InstrumentOptions.builder().build(), new MethodIds(true)).bytes);
        for (String name : new String[] {"locked", "lockedLoop"}) {
            MethodNode m = method(cn, name);
            InsnList code = m.instructions;
            int enter = -1;
            int stamp = -1;
            for (int i = 0; i < code.size(); i++) {
                AbstractInsnNode insn = code.get(i);
                if (insn.getOpcode() == org.objectweb.asm.Opcodes.MONITORENTER) {
                    enter = i;
                } else if (insn instanceof MethodInsnNode && ((MethodInsnNode) insn).name.equals("monitorEntered")) {
                    stamp = i;
                }
            }
            assertTrue(enter >= 0 && stamp > enter, name + ": monitorenter at " + enter + ", stamp at " + stamp);
            // The handler an exception at the stamp goes to (the table's first range that covers
            // it) releases the monitor before it rethrows.
            TryCatchBlockNode first = null;
            for (TryCatchBlockNode t : m.tryCatchBlocks) {
                if (first == null && code.indexOf(t.start) <= stamp && stamp < code.indexOf(t.end)) {
                    first = t;
                }
            }
            assertNotNull(first, name + ": nothing covers the stamp");
            boolean releases = false;
            for (AbstractInsnNode h = first.handler; h != null && h.getOpcode() != org.objectweb.asm.Opcodes.ATHROW; h = h.getNext()) {
                releases |= h.getOpcode() == org.objectweb.asm.Opcodes.MONITOREXIT;
            }
            assertTrue(releases, name + ": an exception at the stamp leaves the monitor held");
            for (int i = 0; i < code.size(); i++) {
                if (code.get(i) instanceof JumpInsnNode) {
                    int target = code.indexOf(((JumpInsnNode) code.get(i)).label);
                    assertFalse(enter < target && target <= stamp, name + ": a jump lands on the stamp");
                }
            }
        }
    }
}
