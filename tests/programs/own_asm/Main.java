import org.objectweb.asm.ClassReader;

/**
 * Bundles a fake org.objectweb.asm.ClassReader (a different API from ASM's) and uses it. The
 * recorder's own ASM must stay invisible to the program: its ClassReader is the program's, and a
 * class that only the real ASM has (Opcodes) cannot be found.
 *
 * Counts the recorder tests rely on: ClassReader.whoAmI() runs 2 times.
 */
public class Main {
    public static void main(String[] args) {
        System.out.println("ClassReader.whoAmI() = " + ClassReader.whoAmI());
        System.out.println(new ClassReader("x").label());
        System.out.println("loaded by the program's loader: "
                + (ClassReader.class.getClassLoader() == Main.class.getClassLoader()));
        try {
            Object who = ClassReader.class.getMethod("whoAmI").invoke(null);
            System.out.println("by reflection: " + who);
        } catch (ReflectiveOperationException e) {
            System.out.println("reflection failed: " + e);
        }
        for (String name : new String[] {"org.objectweb.asm.Opcodes", "org.objectweb.asm.ClassWriter"}) {
            try {
                Class.forName(name);
                System.out.println(name + " visible: true");
            } catch (ClassNotFoundException e) {
                System.out.println(name + " visible: false");
            }
        }
    }
}
