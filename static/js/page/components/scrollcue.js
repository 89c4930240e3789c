// A cue on a region that scrolls sideways (a wide table on a phone): a shade at each edge that has more beyond
// it, so numbers that start off-screen are never cut without a sign. The region is put in a frame that draws
// the shades over it (components.css, .attn-scroll-frame) from data-more ("left", "right", both or none), kept
// up to date as the reader scrolls, as the region is resized and as what it holds changes.

/**
 * Put `region` (a sideways-scrolling element, already in the page) in a frame with the cue, or use the frame it
 * came in (the build writes one around a lesson's table: a lesson's block must be there to be sized). Returns
 * {frame, release()}: release stops following the region and removes the frame it made, with the region in it
 * (a component's destroy), so no observer holds a removed table.
 */
export function withScrollCue(region) {
  let frame = region.parentElement;
  const made = !frame?.classList.contains("attn-scroll-frame");
  if (made) {
    frame = document.createElement("div");
    frame.className = "attn-scroll-frame";
    region.replaceWith(frame);
    frame.append(region);
  }
  const update = () => {
    const beyond = region.scrollWidth - region.clientWidth - region.scrollLeft;
    const more = [region.scrollLeft > 1 ? "left" : "", beyond > 1 ? "right" : ""].filter(Boolean).join(" ");
    if (frame.dataset.more !== more) frame.dataset.more = more;
  };
  region.addEventListener("scroll", update, { passive: true });
  const observers = [];
  if (typeof ResizeObserver !== "undefined") {
    const sizes = new ResizeObserver(update);
    sizes.observe(region);
    const watchChildren = () => { for (const child of region.children) sizes.observe(child); };
    watchChildren();
    const children = new MutationObserver(() => { watchChildren(); update(); });
    children.observe(region, { childList: true });
    observers.push(sizes, children);
  }
  update();
  return {
    frame,
    release() {
      region.removeEventListener("scroll", update);
      for (const observer of observers.splice(0)) observer.disconnect();
      if (made) frame.remove();
    },
  };
}

/** The lesson's own wide tables (the build's `.table-scroll` regions, sitebuild/pages/render.py) get the cue too. */
export function init({ root }) {
  for (const region of root.querySelectorAll(".table-scroll")) withScrollCue(region);
}
