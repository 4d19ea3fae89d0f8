package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;

/** The newest class-file version the ASM in the agent reads, as its reader finds it without reflection. */
class AsmSupportTest {
    @Test
    void maxMajorIsTheNewestVersionConstantOfAsm() throws IllegalAccessException {
        int newest = 0;
        for (Field f : Opcodes.class.getFields()) {
            String n = f.getName();
            if (n.matches("V\\d+") && f.getType() == int.class) {
                newest = Math.max(newest, f.getInt(null) & 0xFFFF);
            }
        }
        assertEquals(newest, AsmSupport.maxMajor());
        assertEquals(newest, AsmSupport.MAX_MAJOR);
    }

    @Test
    void aClassOfTheNewestVersionIsReadAndOneAboveIsLowered() {
        byte[] header = {(byte) 0xCA, (byte) 0xFE, (byte) 0xBA, (byte) 0xBE, 0, 0, 0, 0, 0, 1};
        header[6] = (byte) ((AsmSupport.MAX_MAJOR + 1) >>> 8);
        header[7] = (byte) (AsmSupport.MAX_MAJOR + 1);
        byte[] readable = AsmSupport.readable(header);
        assertEquals(AsmSupport.MAX_MAJOR, AsmSupport.major(readable));
        new ClassReader(readable); // would throw IllegalArgumentException if still too new
    }
}
