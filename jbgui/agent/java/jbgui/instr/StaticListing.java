package jbgui.instr;

/**
 * A class file's methods as the recorder describes them in static.xml, from the class bytes alone:
 * for the explorer's JVM bridge ({@code jbgui/bridge}), which lists the bytecode of traces
 * recorded without {@code instructions=on}.
 *
 * <p>The description is made by {@link ClassInstrumenter}'s own analysis and describing code, so
 * block numbering, {@code start}/{@code end} offsets, lines, metrics, call sites, handlers and
 * instruction text are the recorder's by construction. What this returns is one string (cheap to
 * hand across JPype): a {@code <class>} element with the class file's attributes, then the
 * {@code <method>} elements of static.xml, with two differences that only matter to a reader that
 * is not a trace's:
 *
 * <ul>
 *   <li>ids (method {@code id}, {@code basic_block id}, a handler's {@code basic_block_id}) are
 *       those of a trace whose first method id is 1; decode a handler's block index with the
 *       method's {@code id} (docs/trace-format.md, event layout);
 *   <li>a block's instruction lines are joined by {@code &#13;} (a carriage return once parsed)
 *       rather than a newline: no line can hold one, so the lines split exactly even where a
 *       string constant holds a newline.
 * </ul>
 *
 * <p>A class file ASM cannot read throws the exception ASM throws. Newer class files than this ASM
 * knows (a JDK 25 image) are read as {@link AsmSupport} allows.
 */
public final class StaticListing {
    private StaticListing() {}

    /** What joins a block's instruction lines in this description: a carriage return. */
    public static final String LINE_SEPARATOR = "&#13;";

    /** Every method of the class, with blocks as the recorder cuts them with {@code bba=precise} or not. */
    public static String describe(byte[] classFile, boolean precise) {
        return describe(classFile, precise, null, null);
    }

    /**
     * One method of the class (name and descriptor), or every method when {@code name} is null.
     * An absent method gives a {@code <class>} element without {@code <method>}.
     */
    public static String describe(byte[] classFile, boolean precise, String name, String desc) {
        ClassInstrumenter describer = new ClassInstrumenter(InstrumentOptions.builder().precise(precise)
                .instructions(true).listingSeparator(LINE_SEPARATOR).build());
        return describer.describeWithoutProbes(classFile, name, desc);
    }
}
