// Mermaid diagrams, drawn only when one shows: the vendored mermaid file is
// loaded from this server the first time a diagram scrolls into view. The
// SVG it makes is shown as an <img> from a data: URL, where no script in it
// could run and no style in it reaches the page.

let loading = null;
let counter = 0;

function load() {
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/assets/vendor/mermaid.min.js";
      script.onload = () => {
        const mermaid = globalThis.mermaid;
        if (!mermaid) return reject(new Error("mermaid did not load"));
        mermaid.initialize({
          startOnLoad: false,
          securityLevel: "strict",
          htmlLabels: false,
          flowchart: { htmlLabels: false },
          theme: "neutral",
        });
        resolve(mermaid);
      };
      script.onerror = () => reject(new Error("mermaid could not be loaded"));
      document.head.append(script);
    });
  }
  return loading;
}

const observer = "IntersectionObserver" in globalThis
  ? new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (entry.isIntersecting) {
          observer.unobserve(entry.target);
          draw(entry.target);
        }
      }
    }, { rootMargin: "200px" })
  : null;

const sources = new WeakMap();

/** Draw `source` into `holder` once it is about to show. */
export function diagram(holder, source) {
  sources.set(holder, source);
  holder.classList.add("pending");
  if (observer) observer.observe(holder);
  else draw(holder);
}

async function draw(holder) {
  const source = sources.get(holder);
  try {
    const mermaid = await load();
    const { svg } = await mermaid.render(`cortex-diagram-${++counter}`, source);
    const img = document.createElement("img");
    img.className = "diagram-svg";
    img.alt = "diagram";
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
    holder.classList.remove("pending");
    holder.replaceChildren(img);
  } catch (error) {
    holder.classList.remove("pending");
    holder.classList.add("failed");
    const note = document.createElement("figcaption");
    note.textContent = `diagram not drawn: ${error?.message ?? error}`;
    holder.append(note);
  }
}
