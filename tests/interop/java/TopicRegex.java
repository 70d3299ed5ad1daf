import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;

/**
 * RE2J, as Kafka 4.3.1 resolves a KIP-848 subscription's regex (Utils.
 * throwIfRegularExpressionIsInvalid, then Matcher.matches per topic name), for
 * tests/interop/test_topic_regex_vs_re2j.py: one request per line on stdin, one answer
 * line each. Strings travel as the hex of their UTF-8 bytes.
 *
 *   REGEXHEX NAMEHEX,NAMEHEX,...  -> "OK i,j,..." (the indexes of the names matched whole)
 *                                    or "ERR <PatternSyntaxException.getDescription()>"
 */
public final class TopicRegex {
    private TopicRegex() {
    }

    static String text(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static String answer(String line) {
        String[] f = line.split(" ", -1);
        Pattern pattern;
        try {
            pattern = Pattern.compile(text(f[0]));
        } catch (PatternSyntaxException e) {
            return "ERR " + e.getDescription();
        }
        List<String> matched = new ArrayList<>();
        if (!f[1].isEmpty()) {
            String[] names = f[1].split(",", -1);
            for (int i = 0; i < names.length; i++) {
                if (pattern.matcher(text(names[i])).matches()) {
                    matched.add(Integer.toString(i));
                }
            }
        }
        return "OK " + String.join(",", matched);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            out.println(answer(line));
            out.flush();
        }
    }
}
