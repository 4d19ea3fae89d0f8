package jbgui.instr;

import org.objectweb.asm.ClassReader;

/**
 * Class files newer than the ASM on this machine. Debian's ASM 9.4 refuses class files of JDK 21
 * and later only because of their version number: their structure (constant pool, attributes,
 * instructions) is the same. The instrumenter reads such a class with the version lowered to the
 * newest ASM knows and writes it back with its own version.
 */
public final class AsmSupport {
    private AsmSupport() {}

    /** The highest class-file major version this ASM reads. */
    public static final int MAX_MAJOR = maxMajor();

    /**
     * Asks ASM's own reader: the first major version whose bare header (magic, version and an
     * empty constant pool) its constructor refuses. Not by reading the {@code Opcodes.V*} fields
     * by reflection, as before: that loaded five JDK classes (field accessors) before the agent
     * instruments the loaded classes, each one more to redefine (jbgui.output.Utf8).
     */
    static int maxMajor() {
        byte[] header = {(byte) 0xCA, (byte) 0xFE, (byte) 0xBA, (byte) 0xBE, 0, 0, 0, 0, 0, 1};
        int max = 52;
        for (int major = 53; major <= 0xFFFF; major++) {
            header[6] = (byte) (major >>> 8);
            header[7] = (byte) major;
            try {
                new ClassReader(header);
            } catch (IllegalArgumentException e) {
                break;
            }
            max = major;
        }
        return max;
    }

    public static int major(byte[] classFile) {
        return ((classFile[6] & 0xFF) << 8) | (classFile[7] & 0xFF);
    }

    /** The bytes ASM will read: a copy with a lowered version when the class is too new. */
    public static byte[] readable(byte[] classFile) {
        if (major(classFile) <= MAX_MAJOR) {
            return classFile;
        }
        byte[] copy = classFile.clone();
        copy[6] = (byte) (MAX_MAJOR >>> 8);
        copy[7] = (byte) MAX_MAJOR;
        return copy;
    }
}
