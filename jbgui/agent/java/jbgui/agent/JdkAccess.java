package jbgui.agent;

/**
 * The engine's JDK-internal calls, compiled against jdk.internal.access (build.py) and made
 * directly, not by reflection: looking up a method reflectively loads the types of every method
 * of its class (SharedSecrets and JavaLangAccess name some 40 classes), and the agent would then
 * instrument each of them. Engine.start exports the package to the engine's module; a JDK
 * without these entry points fails the call with a LinkageError, which callers catch.
 */
final class JdkAccess {
    private JdkAccess() {}

    /** A hook in the JVM's own table of shutdown hooks (slot, not registered during shutdown). */
    static void registerShutdownHook(int slot, Runnable hook) {
        jdk.internal.access.SharedSecrets.getJavaLangAccess().registerShutdownHook(slot, false, hook);
    }

    /**
     * Native access for a named module (JDK 22+: JavaLangAccess.addEnableNativeAccess, what
     * --enable-native-access=M does at start-up); see CodecModule. Looked up by a method handle,
     * since the JDK the agent is compiled against (17) lacks it, and one method's lookup loads
     * only its own types, where reflection over the interface would load those of all of them.
     */
    static void grantNativeAccess(Module module) throws Throwable {
        Object access = jdk.internal.access.SharedSecrets.getJavaLangAccess();
        java.lang.invoke.MethodHandle add = java.lang.invoke.MethodHandles.lookup().findVirtual(
                jdk.internal.access.JavaLangAccess.class, "addEnableNativeAccess",
                java.lang.invoke.MethodType.methodType(Module.class, Module.class));
        Object ignored = add.invoke(access, module);
    }
}
