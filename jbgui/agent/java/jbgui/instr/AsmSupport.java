package jbgui.instr;

import java.lang.reflect.Field;

import org.objectweb.asm.Opcodes;

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

    private static int maxMajor() {
        int max = 52;
        for (Field f : Opcodes.class.getFields()) {
            String n = f.getName();
            if (n.length() > 1 && n.charAt(0) == 'V' && Character.isDigit(n.charAt(1)) && f.getType() == int.class) {
                try {
                    max = Math.max(max, f.getInt(null) & 0xFFFF);
                } catch (IllegalAccessException e) {
                    // Public constants; cannot happen.
                }
            }
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
