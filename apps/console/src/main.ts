// The operator console (contract §4.6; ADR 0018): served by the gateway at /ui/.
import './styles.css';
import './shell/console-app';
