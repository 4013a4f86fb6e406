//! The seed's command language (`BEGIN_PHASE phase: architect needs: memory`).
