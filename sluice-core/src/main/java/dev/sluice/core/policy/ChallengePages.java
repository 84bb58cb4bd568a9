package dev.sluice.core.policy;

import dev.sluice.core.http.Bodies;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The pages of a challenge: the puzzle page, and the short pages of its verdicts (passed, failed,
 * used, too many). No external resource, no inline handler: the page's one script and style
 * carry the response's CSP nonce, and its worker is a blob made from the script's own function.
 *
 * <p>The puzzle page is a template cut once at its three per-request slots (the nonce, twice;
 * the puzzle; its difficulty): a page is those parts copied into one array, so a flood of
 * challenged requests costs a copy of about 4 KB each, not a template fill.
 *
 * <p>The worker computes SHA-256 itself (pages may be served over plain HTTP, where
 * {@code crypto.subtle} does not exist, and it is synchronous and faster for this): the blocks
 * of {@code puzzle + "."} that do not change are compressed once, then each candidate number
 * costs the one or two blocks after them.
 */
final class ChallengePages {

  /** The page may not grow past this (the bound): it is sent to every challenged GET. */
  static final int MAX_PAGE_BYTES = 16 * 1024;

  static final String NONCE = "{{nonce}}";
  static final String PUZZLE = "{{puzzle}}";
  static final String DIFFICULTY = "{{difficulty}}";

  private static final String SOLVER = ""
      + "function solver(){\n"
      + "var K=[0x428a2f98,0x71374491,0xb5c0fbcf,0xe9b5dba5,0x3956c25b,0x59f111f1,0x923f82a4,"
      + "0xab1c5ed5,0xd807aa98,0x12835b01,0x243185be,0x550c7dc3,0x72be5d74,0x80deb1fe,0x9bdc06a7,"
      + "0xc19bf174,0xe49b69c1,0xefbe4786,0x0fc19dc6,0x240ca1cc,0x2de92c6f,0x4a7484aa,0x5cb0a9dc,"
      + "0x76f988da,0x983e5152,0xa831c66d,0xb00327c8,0xbf597fc7,0xc6e00bf3,0xd5a79147,0x06ca6351,"
      + "0x14292967,0x27b70a85,0x2e1b2138,0x4d2c6dfc,0x53380d13,0x650a7354,0x766a0abb,0x81c2c92e,"
      + "0x92722c85,0xa2bfe8a1,0xa81a664b,0xc24b8b70,0xc76c51a3,0xd192e819,0xd6990624,0xf40e3585,"
      + "0x106aa070,0x19a4c116,0x1e376c08,0x2748774c,0x34b0bcb5,0x391c0cb3,0x4ed8aa4a,0x5b9cca4f,"
      + "0x682e6ff3,0x748f82ee,0x78a5636f,0x84c87814,0x8cc70208,0x90befffa,0xa4506ceb,0xbef9a3f7,"
      + "0xc67178f2];\n"
      + "var W=new Int32Array(64);\n"
      + "function block(h,m,o){var i,x,y;\n"
      + "for(i=0;i<16;i++){W[i]=m[o+4*i]<<24|m[o+4*i+1]<<16|m[o+4*i+2]<<8|m[o+4*i+3];}\n"
      + "for(i=16;i<64;i++){x=W[i-2];y=W[i-15];"
      + "W[i]=(((x>>>17)|(x<<15))^((x>>>19)|(x<<13))^(x>>>10))+W[i-7]"
      + "+(((y>>>7)|(y<<25))^((y>>>18)|(y<<14))^(y>>>3))+W[i-16]|0;}\n"
      + "var a=h[0],b=h[1],c=h[2],d=h[3],e=h[4],f=h[5],g=h[6],k=h[7],t1,t2;\n"
      + "for(i=0;i<64;i++){"
      + "t1=k+(((e>>>6)|(e<<26))^((e>>>11)|(e<<21))^((e>>>25)|(e<<7)))+((e&f)^(~e&g))+K[i]+W[i]|0;"
      + "t2=(((a>>>2)|(a<<30))^((a>>>13)|(a<<19))^((a>>>22)|(a<<10)))+((a&b)^(a&c)^(b&c))|0;"
      + "k=g;g=f;f=e;e=d+t1|0;d=c;c=b;b=a;a=t1+t2|0;}\n"
      + "h[0]=h[0]+a|0;h[1]=h[1]+b|0;h[2]=h[2]+c|0;h[3]=h[3]+d|0;"
      + "h[4]=h[4]+e|0;h[5]=h[5]+f|0;h[6]=h[6]+g|0;h[7]=h[7]+k|0;}\n"
      + "function solve(p,zeros){var i,n,s,j,len,blocks,bits,end,full=p.length-p.length%64,"
      + "mid=Int32Array.of(0x6a09e667,0xbb67ae85,0x3c6ef372,0xa54ff53a,0x510e527f,0x9b05688c,"
      + "0x1f83d9ab,0x5be0cd19),buf=new Uint8Array(p.length+64),tail=new Uint8Array(128),"
      + "h=new Int32Array(8),rest=p.length-full;\n"
      + "for(i=0;i<p.length;i++){buf[i]=p.charCodeAt(i);}\n"
      + "for(i=0;i<full;i+=64){block(mid,buf,i);}\n"
      + "for(i=0;i<rest;i++){tail[i]=buf[full+i];}\n"
      + "for(n=0;;n++){s=String(n);len=rest+s.length;\n"
      + "for(j=0;j<s.length;j++){tail[rest+j]=s.charCodeAt(j);}\n"
      + "blocks=len+9<=64?1:2;end=blocks*64;tail[len]=0x80;"
      + "for(j=len+1;j<end;j++){tail[j]=0;}\n"
      + "bits=(p.length+s.length)*8;tail[end-2]=bits>>>8&255;tail[end-1]=bits&255;\n"
      + "h.set(mid);block(h,tail,0);if(blocks===2){block(h,tail,64);}\n"
      + "if(Math.clz32(h[0])>=zeros){return n;}}}\n"
      + "onmessage=function(e){postMessage(solve(e.data[0]+'.',e.data[1]));};}\n";

  private final List<byte[]> parts;
  private final List<String> slots;
  private final int fixedBytes;
  private final byte[] passed;
  private final byte[] failed;
  private final byte[] used;
  private final byte[] limited;

  /**
   * Pages for {@code settings}; {@code cookie} is the submission cookie's name, the page's
   * script writes the answer there.
   */
  ChallengePages(Challenge settings, String cookie) {
    String page = page(settings, cookie);
    this.parts = new ArrayList<>();
    this.slots = new ArrayList<>();
    int fixed = 0;
    int i = 0;
    while (true) {
      int next = -1;
      String slot = null;
      for (String s : List.of(NONCE, PUZZLE, DIFFICULTY)) {
        int at = page.indexOf(s, i);
        if (at >= 0 && (next < 0 || at < next)) {
          next = at;
          slot = s;
        }
      }
      byte[] part = page.substring(i, next < 0 ? page.length() : next)
          .getBytes(StandardCharsets.UTF_8);
      parts.add(part);
      fixed += part.length;
      if (next < 0) {
        break;
      }
      slots.add(slot);
      i = next + slot.length();
    }
    this.fixedBytes = fixed;
    this.passed = small("Verified", "Thank you. Your browser passed the check; the page "
        + "loads now.", "<meta http-equiv=\"refresh\" content=\"0\">\n", "Continue to the page");
    this.failed = small("Check failed", "Your browser's answer to the check was not right, or "
        + "it came from another network. Reload the page to get a new check.", "",
        "Reload the page");
    this.used = small("Check already used", "This check was already passed once and cannot "
        + "be used again. Reload the page to get a new check.", "", "Reload the page");
    this.limited = small("Too many checks", "Your network has asked for more checks than this "
        + "site allows in a short time. Wait a minute, then reload the page.", "",
        "Reload the page");
  }

  /** The puzzle page for this request. */
  byte[] puzzle(String nonce, String puzzle, int difficulty) {
    String bits = Integer.toString(difficulty);
    int n = fixedBytes;
    for (String s : slots) {
      n += s == NONCE ? nonce.length() : s == PUZZLE ? puzzle.length() : bits.length();
    }
    byte[] out = new byte[n];
    int at = 0;
    for (int i = 0; i < parts.size(); i++) {
      byte[] part = parts.get(i);
      System.arraycopy(part, 0, out, at, part.length);
      at += part.length;
      if (i < slots.size()) {
        String s = slots.get(i);
        at = ascii(s == NONCE ? nonce : s == PUZZLE ? puzzle : bits, out, at);
      }
    }
    return out;
  }

  byte[] passed() {
    return passed;
  }

  byte[] failed() {
    return failed;
  }

  byte[] used() {
    return used;
  }

  byte[] limited() {
    return limited;
  }

  /** The script's and style's CSP for the puzzle page with {@code nonce}. */
  static String policy(String nonce) {
    return "default-src 'none'; script-src 'nonce-" + nonce + "'; style-src 'nonce-" + nonce
        + "'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  }

  /** The verdict pages' CSP: no script at all, the inline style by its hash-free attribute. */
  static final String SMALL_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; "
      + "frame-ancestors 'none'";

  private static int ascii(String s, byte[] out, int at) {
    for (int i = 0; i < s.length(); i++) {
      out[at++] = (byte) s.charAt(i);
    }
    return at;
  }

  private static String page(Challenge settings, String cookie) {
    long wait = settings.noscriptWait().toSeconds();
    boolean refresh = settings.noscript() == Challenge.NoScript.REFRESH;
    String secure = settings.secureCookie() ? "; Secure" : "";
    StringBuilder sb = new StringBuilder(4096);
    sb.append("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        .append("<meta name=\"robots\" content=\"noindex\">\n")
        .append("<title>Checking your browser</title>\n");
    if (refresh) {
      sb.append("<noscript><meta http-equiv=\"refresh\" content=\"").append(wait)
          .append("\"></noscript>\n");
    }
    sb.append("<style nonce=\"").append(NONCE).append("\">")
        .append("body{font:1.05rem/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;")
        .append("padding:0 1rem;color:#1b1b1b;background:#fff}")
        .append("progress{width:100%;height:1rem}")
        .append("@media (prefers-color-scheme:dark){body{color:#eee;background:#161616}}")
        .append("</style>\n</head>\n<body>\n<main>\n<h1>Checking your browser</h1>\n")
        .append("<p>This site is receiving more requests than usual from your network. Before ")
        .append("it shows you this page, your browser solves a small puzzle, which a person's ")
        .append("browser does in a moment and a flood of scripted requests cannot afford. ")
        .append("You do not need to do anything.</p>\n")
        .append("<p id=\"status\" role=\"status\" aria-live=\"polite\">Checking, this takes a ")
        .append("few seconds.</p>\n")
        .append("<progress id=\"progress\" aria-label=\"Checking your browser\"></progress>\n");
    if (refresh) {
      sb.append("<noscript><p>JavaScript is off, so this page continues by itself in ")
          .append(wait).append(" seconds.</p></noscript>\n");
    } else {
      sb.append("<noscript><p>This check needs JavaScript. Turn it on for this site and ")
          .append("reload the page.</p></noscript>\n");
    }
    sb.append("<p>The check sets one cookie on this site, which holds no personal data and ")
        .append("expires within ").append(human(settings.clearance().toSeconds()))
        .append(".</p>\n</main>\n")
        .append("<script nonce=\"").append(NONCE).append("\">\n")
        .append(SOLVER)
        .append("(function(){var P=\"").append(PUZZLE).append("\",D=").append(DIFFICULTY)
        .append(",st=document.getElementById(\"status\");\n")
        .append("function fail(){st.textContent=\"Your browser could not run the check. ")
        .append("Reload the page to try again.\";document.getElementById(\"progress\")")
        .append(".hidden=true;}\n")
        .append("try{var w=new Worker(URL.createObjectURL(new Blob([\"(\"+solver+\")()\"],")
        .append("{type:\"text/javascript\"})));\n")
        .append("w.onmessage=function(e){document.cookie=\"").append(cookie)
        .append("=\"+P+\".\"+e.data+\"; Path=/; Max-Age=")
        .append(settings.solveWithin().toSeconds()).append("; SameSite=Lax").append(secure)
        .append("\";st.textContent=\"Done. Loading the page.\";location.reload();};\n")
        .append("w.onerror=fail;w.postMessage([P,D]);}catch(x){fail();}})();\n")
        .append("</script>\n</body>\n</html>\n");
    return sb.toString();
  }

  private static byte[] small(String title, String text, String head, String link) {
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        + "<meta name=\"robots\" content=\"noindex\">\n" + head + "<title>" + Bodies.html(title)
        + "</title>\n</head>\n<body>\n<main>\n<h1>" + Bodies.html(title) + "</h1>\n<p>"
        + Bodies.html(text) + "</p>\n<p><a href=\"\">" + Bodies.html(link) + "</a></p>\n"
        + "</main>\n</body>\n</html>\n").getBytes(StandardCharsets.UTF_8);
  }

  private static String human(long seconds) {
    if (seconds % 86400 == 0) {
      return plural(seconds / 86400, "day");
    }
    if (seconds % 3600 == 0) {
      return plural(seconds / 3600, "hour");
    }
    return seconds % 60 == 0 ? plural(seconds / 60, "minute") : plural(seconds, "second");
  }

  private static String plural(long n, String unit) {
    return n + " " + unit + (n == 1 ? "" : "s");
  }
}
