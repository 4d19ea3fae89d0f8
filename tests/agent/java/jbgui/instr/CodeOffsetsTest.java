package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.tree.ClassNode;

/**
 * The bytecode offsets the static information names, against the JDK's own disassembler: javap
 * prints every instruction with its offset, so the two must list the same offsets for every method
 * of the targets, switches (padding, jump tables, pairs) and wide instructions included.
 */
class CodeOffsetsTest {
    private static final Pattern INSTRUCTION = Pattern.compile("^\\s+(\\d+): [a-z]");

    /** Per method with code, in file order: javap's offsets. */
    private static List<List<Integer>> javap(byte[] bytes) throws Exception {
        Path file = Files.createTempFile("Targets", ".class");
        try {
            Files.write(file, bytes);
            ToolProvider javap = ToolProvider.findFirst("javap").orElseThrow();
            StringWriter out = new StringWriter();
            int status = javap.run(new PrintWriter(out), new PrintWriter(out), "-c", "-p", file.toString());
            assertEquals(0, status, out.toString());
            List<List<Integer>> methods = new ArrayList<>();
            List<Integer> current = null;
            for (String line : out.toString().split("\n")) {
                if (line.trim().equals("Code:")) {
                    current = new ArrayList<>();
                    methods.add(current);
                    continue;
                }
                Matcher m = INSTRUCTION.matcher(line);
                if (current != null && m.find()) {
                    current.add(Integer.parseInt(m.group(1)));
                } else if (!line.startsWith("      ")) {
                    current = null; // past the code (javap indents code and its switch tables deeper)
                }
            }
            return methods;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void offsetsAreJavapsForEveryMethod() throws Exception {
        byte[] bytes = TestSupport.bytes(Targets.class);
        ClassNode cn = TestSupport.tree(bytes);
        int[][] offsets = CodeOffsets.compute(new ClassReader(bytes), bytes, cn.methods.size());
        List<List<Integer>> expected = javap(bytes);
        List<int[]> withCode = new ArrayList<>();
        for (int[] o : offsets) {
            if (o != null) {
                withCode.add(o);
            }
        }
        assertEquals(expected.size(), withCode.size());
        assertTrue(expected.size() >= 14, "javap listed " + expected.size() + " methods");
        for (int m = 0; m < expected.size(); m++) {
            int[] ours = withCode.get(m);
            // ours ends with the code length, one past the last instruction
            int[] starts = java.util.Arrays.copyOf(ours, ours.length - 1);
            assertArrayEquals(expected.get(m).stream().mapToInt(Integer::intValue).toArray(), starts,
                    "method " + cn.methods.get(m).name);
            assertTrue(ours[ours.length - 1] > starts[starts.length - 1]);
        }
    }

    @Test
    void oneOffsetPerInstructionNode() {
        byte[] bytes = TestSupport.bytes(Targets.class);
        ClassNode cn = TestSupport.tree(bytes);
        int[][] offsets = CodeOffsets.compute(new ClassReader(bytes), bytes, cn.methods.size());
        for (String name : new String[] {"pick", "sparse", "wide", "locked"}) {
            int index = 0;
            while (!cn.methods.get(index).name.equals(name)) {
                index++;
            }
            assertNotNull(offsets[index], name);
            // real instructions only: ASM adds labels, line numbers and frames as nodes of their own
            int real = 0;
            for (var i = cn.methods.get(index).instructions.getFirst(); i != null; i = i.getNext()) {
                if (i.getOpcode() >= 0) {
                    real++;
                }
            }
            assertEquals(real, offsets[index].length - 1, name);
        }
    }
}
