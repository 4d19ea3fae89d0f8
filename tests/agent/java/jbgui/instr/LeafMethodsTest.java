package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.util.CheckClassAdapter;

/**
 * Which methods get the one leaf probe (LeafMethods): those that call nothing, cannot throw and run
 * straight to a return; and what the instrumented code then holds.
 */
class LeafMethodsTest {
    private static final String OWNER = "jbgui/instr/LeafTargets";

    private static boolean leaf(String name, boolean blocks) {
        MethodNode m = TestSupport.method(LeafTargets.class, name);
        BlockAnalysis ba = BlockAnalysis.analyze(m, false);
        return LeafMethods.isLeaf(m, OWNER, ba, blocks, blocks && BlockElision.entryImplied(m, ba));
    }

    @Test
    void gettersSettersAndArithmeticAreLeaves() {
        for (String name : new String[] {"size", "setSize", "twice", "name", "widen"}) {
            assertTrue(leaf(name, true), name + " at block level");
            assertTrue(leaf(name, false), name + " at method level");
        }
    }

    @Test
    void forwardBranchesMakeALeafAtMethodLevelOnly() {
        assertTrue(leaf("isEmpty", false));
        assertFalse(leaf("isEmpty", true), "its blocks are events of their own");
    }

    @Test
    void whatMayCallThrowLoopOrLockIsNoLeaf() {
        for (String name : new String[] {"nextSize", "either", "sharedValue", "type", "half", "count", "lockedSize",
                "hash", "<init>"}) {
            assertFalse(leaf(name, false), name);
        }
    }

    private static List<String> runtimeCalls(MethodNode m) {
        List<String> calls = new ArrayList<>();
        for (AbstractInsnNode i = m.instructions.getFirst(); i != null; i = i.getNext()) {
            if (i instanceof MethodInsnNode && ((MethodInsnNode) i).owner.startsWith("jbgui/runtime/")) {
                calls.add(((MethodInsnNode) i).name + ((MethodInsnNode) i).desc);
            }
        }
        return calls;
    }

    @Test
    void aLeafGetsOneProbeAndKeepsItsLocalsAndHandlers() {
        ClassPlan plan = new ClassPlan(7, OWNER, 0, "app", null, false, false, false, ClassPlan.Mode.TRACE, null);
        InstrumentResult r = new ClassInstrumenter(InstrumentOptions.builder().entryElision(true).build())
                .instrument(TestSupport.bytes(LeafTargets.class), plan, new MethodIds(true));
        StringWriter problems = new StringWriter();
        CheckClassAdapter.verify(new ClassReader(r.bytes), LeafMethodsTest.class.getClassLoader(), false,
                new PrintWriter(problems));
        assertEquals("", problems.toString());
        ClassNode cn = TestSupport.tree(r.bytes);
        MethodNode original = TestSupport.method(LeafTargets.class, "size");
        for (MethodNode m : cn.methods) {
            List<String> calls = runtimeCalls(m);
            if (m.name.equals("size")) {
                assertEquals(List.of("leaf(ILjava/lang/Object;)V"), calls);
                assertEquals(original.maxLocals, m.maxLocals, "no new local");
                assertTrue(m.tryCatchBlocks.isEmpty(), "no exception-exit handler");
            } else if (m.name.equals("widen")) {
                assertEquals(List.of("leaf(I)V"), calls);
            } else if (m.name.equals("isEmpty")) {
                assertTrue(calls.size() > 3, "at block level its blocks are probed: " + calls);
            } else if (m.name.equals("nextSize")) {
                assertTrue(calls.contains("exit(Ljbgui/runtime/ThreadTrace;I)V"), calls.toString());
                assertTrue(calls.get(0).startsWith("enterInstance"), calls.toString());
                assertFalse(m.tryCatchBlocks.isEmpty(), "the exception-exit handler");
            }
        }
    }
}
