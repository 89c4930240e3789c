// Generated from static/js/page/widgets/*/spec.yml (python3 -m sitebuild.pages.page_copies); do not edit.
// widget-loader.js starts each widget with load(); a preloaded one comes with it (a static import).
import * as preloaded0 from "./attention-view/view.js";

export const WIDGETS = Object.freeze({
  "attention-view": { load: async () => preloaded0.createViewWidget, receives: "attention", calls: {} },
  "dk-explorer": { load: async () => (await import("./dk-explorer/explorer.js")).createExplorer, receives: null, calls: {"explore": ["lessonpy.course.attention.widget_payloads", "explore"]} },
  "heads": { load: async () => (await import("./heads/heads.js")).createHeads, receives: null, calls: {"heads": ["lessonpy.course.attention.widget_payloads", "heads"]} },
  "lookup-view": { load: async () => (await import("./lookup-view/lookup.js")).createLookupWidget, receives: "lookup", calls: {} },
  "next-token": { load: async () => (await import("./next-token/nexttoken.js")).createNextToken, receives: null, calls: {"files": ["lessonpy.models.next_token", "files"], "predict": ["lessonpy.models.next_token", "predict"], "generate": ["lessonpy.models.generate", "start"], "more": ["lessonpy.models.generate", "more"]} },
  "real-heads": { load: async () => (await import("./real-heads/realheads.js")).createRealHeads, receives: null, calls: {"grid": ["lessonpy.course.attention.widget_payloads", "real_heads"], "live_files": ["lessonpy.models.live", "files"], "live_heads": ["lessonpy.models.live", "heads"]} },
  "residual-stream": { load: async () => (await import("./residual-stream/residual.js")).createResidualStream, receives: "residual-stream", calls: {"files": ["lessonpy.models.next_token", "files"], "stream": ["lessonpy.course.block.residual_stream", "stream"], "lens": ["lessonpy.course.block.show_stream", "lens"]} },
  "step-through": { load: async () => preloaded0.createStepThrough, receives: "attention", calls: {} },
});
