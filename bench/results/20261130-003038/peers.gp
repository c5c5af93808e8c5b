# gnuplot peers.gp (in this directory) redraws peers.png
set terminal pngcairo size 540,640 font 'sans,9'
set output 'peers.png'
set datafile missing 'nan'
set title "peers: Debian's xdp-bench against xdplab on the same traffic\n5 rounds; bars: median, whiskers: min-max" noenhanced
set style fill solid 0.5 border -1
set grid ytics
set yrange [0:*]
set xrange [-0.6:3.6]
set bmargin 13
set xtics rotate by -40 left noenhanced
set key top right noenhanced
set ylabel "veth1 Mpps (million frames/s received by veth1 (rx_packets))"
set boxwidth 0.6
plot 'peers.dat' using 1:9:10:11:(0.6):xtic(2) with boxerrorbars notitle
