// Copy buttons on static code blocks ([data-copy]): the build renders them hidden, this
// module shows them and puts the block's code on the clipboard, announcing "Copied".

const ANNOUNCE_MS = 2000;

/** Copy text with the Clipboard API, or with a hidden textarea where that is unavailable. */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // permission refused or no focus: fall through to the old way
    }
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

function wire(block) {
  const button = block.querySelector(".copy-button");
  const status = block.querySelector(".copy-status");
  const code = block.querySelector("pre code");
  if (!button || !code) return;
  const label = button.textContent;
  let timer = 0;
  button.hidden = false;
  button.addEventListener("click", async () => {
    const ok = await copyText(code.textContent);
    const message = ok ? "Copied" : "Could not copy: select the code and press Ctrl+C";
    button.textContent = ok ? "Copied" : "Copy failed";
    if (status) status.textContent = message;
    block.dataset.copied = ok ? "yes" : "no";
    clearTimeout(timer);
    timer = setTimeout(() => {
      button.textContent = label;
      if (status) status.textContent = "";
      delete block.dataset.copied;
    }, ANNOUNCE_MS);
  });
}

export function init({ root }) {
  root.querySelectorAll("[data-copy]").forEach(wire);
}
