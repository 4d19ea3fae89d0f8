package jbgui.output;

import java.util.List;

/**
 * The one writer of static.xml's {@code <class>} element (docs/trace-format.md): its attributes,
 * its opening tag, and the whole element of a class that is never instrumented. The
 * {@code <method>} elements inside come from {@code jbgui.instr.MethodElements}; nothing else in
 * the agent spells the element.
 */
public final class ClassElement {
    private ClassElement() {}

    /** The attributes that depend only on the class file (a leading space before each). */
    public static String fileAttributes(String name, String superName, List<String> interfaces, int access,
                                        int version, String sourceFile) {
        StringBuilder s = new StringBuilder(128);
        s.append(" name=\"").append(Xml.attr(name)).append('"');
        if (superName != null) {
            s.append(" super=\"").append(Xml.attr(superName)).append('"');
        }
        if (interfaces != null && !interfaces.isEmpty()) {
            s.append(" interfaces=\"").append(Xml.attr(String.join(" ", interfaces))).append('"');
        }
        s.append(" access=\"").append(access).append("\" version=\"").append(version & 0xFFFF).append('"');
        if (sourceFile != null) {
            s.append(" source_file=\"").append(Xml.attr(sourceFile)).append('"');
        }
        return s.toString();
    }

    /** {@code instrumented="true"}, or {@code instrumented="false" reason="…"}. */
    public static String status(boolean instrumented, String reason) {
        return instrumented ? " instrumented=\"true\"" : " instrumented=\"false\" reason=\"" + Xml.attr(reason) + "\"";
    }

    /**
     * The opening tag: the class id, the class file's attributes ({@link #fileAttributes}), then
     * this run's (loader, module, …) and the instrumentation status ({@link #status}).
     */
    public static String open(int classId, String fileAttributes, int loaderId, String loader, String module,
                              boolean jdk, boolean preloaded, String status) {
        StringBuilder s = new StringBuilder(256);
        s.append("<class id=\"").append(classId).append('"').append(fileAttributes);
        s.append(" loader_id=\"").append(loaderId).append("\" loader=\"").append(Xml.attr(loader)).append('"');
        if (module != null) {
            s.append(" module=\"").append(Xml.attr(module)).append('"');
        }
        s.append(" jdk=\"").append(jdk).append('"');
        if (preloaded) {
            s.append(" preloaded=\"true\"");
        }
        return s.append(status).append(">\n").toString();
    }

    /** The opening tag of a class described without a run (ids from 1, no loader): listings. */
    public static String openWithoutRun(String fileAttributes) {
        return "<class" + fileAttributes + ">\n";
    }

    /** A warning about the class (a method not analysed, …), inside its element. */
    public static String warning(String text) {
        return " <warning>" + Xml.text(text) + "</warning>\n";
    }

    /** The closing tag. */
    public static String close() {
        return "</class>\n";
    }

    /**
     * The whole element of a class the agent never reads the class file of (not modifiable, or
     * seen after it was defined), with the flags that say how it was met.
     */
    public static String uninstrumented(int classId, String name, int loaderId, String loader, String reason,
                                        boolean preloaded, boolean seenLate, boolean hidden, boolean array) {
        StringBuilder s = new StringBuilder(192);
        s.append("<class id=\"").append(classId).append("\" name=\"").append(Xml.attr(name))
                .append("\" loader_id=\"").append(loaderId).append("\" loader=\"").append(Xml.attr(loader)).append('"')
                .append(status(false, reason));
        if (preloaded) {
            s.append(" preloaded=\"true\"");
        }
        if (seenLate) {
            s.append(" seen_late=\"true\"");
        }
        if (hidden) {
            s.append(" hidden=\"true\"");
        }
        if (array) {
            s.append(" array=\"true\"");
        }
        return s.append("/>\n").toString();
    }
}
