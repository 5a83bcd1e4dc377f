// JaasCheck reads sasl.jaas.config the way the Java client does, for java_test.go to compare
// txnscope's reading with: each input line is "jaas BASE64" (the setting's value) or "props BASE64"
// (a whole client properties file, read by java.util.Properties first); each output line is
// "ok MODULE USERNAME PASSWORD" (each base64 of its UTF-8, "-" for an option that is not set) or
// "err MESSAGE". Run with Kafka's jars on the classpath (scripts/kafka-up fetches them).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;

public class JaasCheck {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] parts = line.split(" ", 2);
            String text = new String(Base64.getDecoder().decode(parts[1]), StandardCharsets.UTF_8);
            System.out.println(check(parts[0], text));
        }
    }

    static String check(String mode, String text) {
        try {
            String value = text;
            if (mode.equals("props")) {
                Properties p = new Properties();
                p.load(new StringReader(text));
                value = p.getProperty("sasl.jaas.config");
                if (value == null) return "err no sasl.jaas.config";
            }
            var entries = JaasContext.loadClientContext(Map.of("sasl.jaas.config", new Password(value))).configurationEntries();
            var e = entries.get(0);
            return "ok " + b64(e.getLoginModuleName()) + " " + b64(e.getOptions().get("username")) + " " + b64(e.getOptions().get("password"));
        } catch (Exception ex) {
            return "err " + String.valueOf(ex.getMessage()).replace('\n', ' ');
        }
    }

    static String b64(Object s) {
        return s == null ? "-" : Base64.getEncoder().encodeToString(((String) s).getBytes(StandardCharsets.UTF_8));
    }
}
