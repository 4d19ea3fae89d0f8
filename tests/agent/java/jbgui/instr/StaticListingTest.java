package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** What static.xml says about a class: the describing code the recorder and the bridge share. */
class StaticListingTest {
    private static Map<String, Element> methods(boolean precise) throws Exception {
        String xml = StaticListing.describe(TestSupport.bytes(Targets.class), precise);
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        Document doc = f.newDocumentBuilder().parse(new ByteArrayInputStream(
                ("<r>" + xml + "</r>").getBytes(StandardCharsets.UTF_8)));
        Map<String, Element> out = new HashMap<>();
        NodeList list = doc.getElementsByTagName("method");
        for (int i = 0; i < list.getLength(); i++) {
            Element m = (Element) list.item(i);
            out.put(m.getAttribute("name"), m);
        }
        return out;
    }

    private static int blocks(Element method) {
        return method.getElementsByTagName("basic_block").getLength();
    }

    @Test
    void everyMethodIsDescribedWithItsBlocks() throws Exception {
        Map<String, Element> m = methods(false);
        int declared = TestSupport.tree(TestSupport.bytes(Targets.class)).methods.size();
        assertEquals(declared, m.size());
        assertEquals(1, blocks(m.get("straight")));
        assertEquals(3, blocks(m.get("abs")));
        assertEquals("3", m.get("abs").getAttribute("blocks"));
        assertEquals("true", m.get("abs").getAttribute("static"));
        assertEquals("(I)I", m.get("abs").getAttribute("desc"));
        assertEquals(3, blocks(m.get("guarded")));     // try range, the return after it, the handler
    }

    @Test
    void blockOffsetsTileTheCode() throws Exception {
        Element abs = methods(false).get("abs");
        NodeList bbs = abs.getElementsByTagName("basic_block");
        int expectStart = 0;
        for (int i = 0; i < bbs.getLength(); i++) {
            Element b = (Element) bbs.item(i);
            assertEquals(String.valueOf(i), b.getAttribute("index"));
            assertEquals(expectStart, Integer.parseInt(b.getAttribute("start")));
            expectStart = Integer.parseInt(b.getAttribute("end"));
        }
        // iload_0 ifge (3 bytes) | iload_0 ineg ireturn | iload_0 ireturn: 9 bytes
        assertEquals(9, expectStart);
        assertEquals("9", abs.getAttribute("code_length"));
    }

    @Test
    void preciseCuttingIsDescribedToo() throws Exception {
        assertEquals(1, blocks(methods(false).get("div")));
        assertEquals(2, blocks(methods(true).get("div")));
    }

    @Test
    void theListingCarriesTheInstructions() throws Exception {
        Element sum = methods(false).get("sum");
        String text = sum.getTextContent();
        assertTrue(text.contains("IALOAD") || text.contains("iaload"), text);
    }
}
