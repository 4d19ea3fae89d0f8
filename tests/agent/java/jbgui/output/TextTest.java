package jbgui.output;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** The tracer's own text builder writes what StringBuilder writes; Xml.attr escapes as before. */
class TextTest {
    @Test
    void numbersAreWrittenAsStringBuilderWritesThem() {
        long[] values = {0, 7, 9, 10, 99, 100, -1, -10, 2048, 1L << 40, Integer.MAX_VALUE, Integer.MIN_VALUE,
                Long.MAX_VALUE, Long.MIN_VALUE};
        Text t = new Text(1);
        StringBuilder expected = new StringBuilder();
        for (long v : values) {
            t.append(v).append(' ');
            expected.append(v).append(' ');
        }
        t.append(-5).append(123456789).append(true).append(false).append('x').append("").append("<é€>");
        expected.append(-5).append(123456789).append(true).append(false).append('x').append("").append("<é€>");
        assertEquals(expected.toString(), t.toString());
        assertEquals(expected.length(), t.length());
    }

    @Test
    void growsPastItsFirstCapacity() {
        Text t = new Text(16);
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            t.append("m").append(i);
            expected.append("m").append(i);
        }
        assertEquals(expected.toString(), t.toString());
    }

    @Test
    void attributesAreEscapedAndPlainOnesReturnedAsTheyAre() {
        String plain = "java/util/HashMap:getNode(Ljava/lang/Object;)Ljava/util/HashMap$Node;";
        assertSame(plain, Xml.attr(plain));
        assertEquals("a&lt;b&gt;&amp;&quot;c&#10;d\t?e?", Xml.attr("a<b>&\"c\nd\t\u0001e\uD800"));
        assertEquals("\u00e9\u20ac\uFFFF", Xml.attr("\u00e9\u20ac\uFFFF"));
        assertEquals("x\ny", Xml.text("x\ny"));
    }
}
