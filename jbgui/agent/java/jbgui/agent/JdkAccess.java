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
}
