package jbgui.instr;

import java.util.List;
import java.util.Set;

import org.objectweb.asm.tree.AnnotationNode;
import org.objectweb.asm.tree.MethodNode;

/** What {@link ClassInstrumenter} learnt about one method before probing it, for static.xml. */
final class MethodFacts {
    private static final Set<String> INTRINSIC_ANNOTATIONS = Set.of(
            "Ljdk/internal/vm/annotation/IntrinsicCandidate;", "Ljdk/internal/HotSpotIntrinsicCandidate;");

    MethodNode node;
    BlockAnalysis blocks;
    /** Original bytecode offset of each instruction, and the code length last (null: unknown). */
    int[] offsets;
    /** The first method id (one per block page). */
    int id;
    int pages;
    /** {@code instrumented} of the method element: "true", "method-only" or "false". */
    String status = "true";
    String reason;

    /**
     * Whether the JIT may replace the method by an intrinsic ({@code @IntrinsicCandidate}): such
     * methods are left as they are, so their calls look the same whether or not the JIT
     * intrinsified them.
     */
    static boolean isIntrinsic(MethodNode mn) {
        for (List<AnnotationNode> list : java.util.Arrays.asList(mn.visibleAnnotations, mn.invisibleAnnotations)) {
            if (list != null) {
                for (AnnotationNode a : list) {
                    if (INTRINSIC_ANNOTATIONS.contains(a.desc)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }
}
